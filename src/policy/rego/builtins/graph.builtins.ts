import { builtinFailure, defineBuiltins, operandTypeError, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoObject, RegoSet, typeName, type RegoValue } from '../rego.value.ts';
import { collectionOperand, objectOperand, sortedMembers } from './operands.ts';

/** Neighbours of a node: the members of an array or set, or an object's keys; null (and anything else) means none. */
function neighbours(edges: RegoValue | undefined): RegoValue[] {
  if (Array.isArray(edges)) return edges;
  if (edges instanceof RegoSet) return sortedMembers(edges);
  if (edges instanceof RegoObject) return [...edges.keys()];
  return [];
}

function graphOperand(name: string, operands: RegoValue[]): RegoObject {
  return objectOperand(name, operands, 1);
}

function reachable(operands: RegoValue[]): RegoValue {
  const graph = graphOperand('graph.reachable', operands);
  const queue = [...collectionOperand('graph.reachable', operands, 2)];
  const reached = new RegoSet();
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as RegoValue;
    const edges = graph.get(node);
    if (edges === undefined || reached.has(node)) continue;
    if (edges !== null && !Array.isArray(edges) && !(edges instanceof RegoSet) && !(edges instanceof RegoObject)) {
      throw operandTypeError('graph.reachable', 1, 'object containing sets, arrays or objects', `object containing ${typeName(edges)}`);
    }
    reached.add(node);
    for (const neighbour of neighbours(edges)) if (!reached.has(neighbour)) queue.push(neighbour);
  }
  return reached;
}

const MAX_PATH_STEPS = 100_000;
/** Paths are followed recursively; this keeps a long chain from exhausting the stack. */
const MAX_PATH_LENGTH = 2_000;

/**
 * graph.reachable_paths, as OPA builds them: depth-first from each initial node; a path ends at a node without
 * edges, at an edge to a node outside the graph, or at an edge back to a node already expanded.
 */
function reachablePaths(operands: RegoValue[]): RegoValue {
  const graph = graphOperand('graph.reachable_paths', operands);
  const initial = collectionOperand('graph.reachable_paths', operands, 2);
  const paths = new RegoSet();
  let steps = 0;
  const walk = (node: RegoValue, path: RegoValue[], expanded: RegoSet): void => {
    // Paths can multiply exponentially in a DAG; a bound keeps a hostile graph from stalling the evaluation.
    if (++steps > MAX_PATH_STEPS || path.length > MAX_PATH_LENGTH) throw builtinFailure('graph.reachable_paths', 'graph too large');
    const here = [...path, node];
    const next = neighbours(graph.get(node));
    if (next.length === 0) {
      paths.add(here);
      return;
    }
    for (const neighbour of next) {
      if (expanded.has(neighbour) || !graph.has(neighbour)) {
        paths.add(here);
      } else {
        expanded.add(node);
        walk(neighbour, here, expanded);
      }
    }
  };
  for (const node of initial) if (graph.has(node)) walk(node, [], new RegoSet());
  return paths;
}

export const GRAPH_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  { name: 'graph.reachable', arity: 2, implementation: reachable },
  { name: 'graph.reachable_paths', arity: 2, implementation: reachablePaths },
]);
