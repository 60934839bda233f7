import { BuiltinError, defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoObject, RegoSet, typeName, valuesEqual, type RegoValue } from '../rego.value.ts';
import { arrayOperand, elementError, objectOperand, oneOfError, operand } from './operands.ts';

/** Keys of an object, set or array operand (object.filter / object.remove accept all three). */
function keysOperand(name: string, operands: RegoValue[], position: number): RegoValue[] {
  const value = operand(operands, position - 1);
  if (value instanceof RegoObject) return [...value.keys()];
  if (value instanceof RegoSet) return [...value.values()];
  if (Array.isArray(value)) return value;
  throw oneOfError(name, position, ['object', 'set', 'array'], value);
}

function objectGet(operands: RegoValue[]): RegoValue {
  let current: RegoValue = objectOperand('object.get', operands, 1);
  const key = operand(operands, 1);
  const fallback = operand(operands, 2);
  if (!Array.isArray(key)) return (current as RegoObject).get(key) ?? fallback;
  // An array key is a path; it may go through objects and arrays (by integer index).
  for (const segment of key) {
    if (current instanceof RegoObject) {
      const next = current.get(segment);
      if (next === undefined) return fallback;
      current = next;
    } else if (Array.isArray(current) && typeof segment === 'number' && Number.isInteger(segment) && segment >= 0 && segment < current.length) {
      current = current[segment] as RegoValue;
    } else if (current instanceof RegoSet && current.has(segment)) {
      current = segment;
    } else {
      return fallback;
    }
  }
  return current;
}

/** Deep merge, the right side winning; nested objects on both sides merge recursively (OPA's object.union). */
function mergeObjects(left: RegoObject, right: RegoObject): RegoObject {
  const result = RegoObject.fromEntries(left.entries());
  for (const [key, value] of right.entries()) {
    const existing = left.get(key);
    result.set(key, existing instanceof RegoObject && value instanceof RegoObject ? mergeObjects(existing, value) : value);
  }
  return result;
}

function unionN(operands: RegoValue[]): RegoValue {
  const objects = arrayOperand('object.union_n', operands, 1);
  let result = new RegoObject();
  for (const value of objects) {
    if (!(value instanceof RegoObject)) throw elementError('object.union_n', 1, operand(operands, 0), value, 'object');
    result = mergeObjects(result, value);
  }
  return result;
}

// ---- JSON paths (json.filter, json.remove): "a/b/c" strings or arrays of segments, turned into a path tree ----

const PATH_ERROR = 'must be one of {set, array} containing string paths or array of path segments';

function parsePath(name: string, path: RegoValue): RegoValue[] {
  if (typeof path === 'string') {
    if (path === '') return [];
    return path
      .replace(/^\/+/, '')
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  }
  if (Array.isArray(path)) return path;
  throw new BuiltinError('eval_type_error', `${name}: operand 2 ${PATH_ERROR} but got ${typeName(path)}`);
}

function pathsOperand(name: string, operands: RegoValue[]): RegoValue[][] {
  const value = operand(operands, 1);
  let members: RegoValue[];
  if (Array.isArray(value)) members = value;
  else if (value instanceof RegoSet) members = [...value.values()];
  else throw oneOfError(name, 2, ['set', 'array'], value);
  return members.map((path) => parsePath(name, path));
}

/** A tree of paths: inner nodes are objects, a `null` leaf selects the whole value below it. */
function pathsToTree(paths: RegoValue[][]): RegoObject {
  const root = new RegoObject();
  for (const path of paths) {
    if (path.length === 0) continue;
    let node = root;
    let covered = false;
    for (const segment of path.slice(0, -1)) {
      const child = node.get(segment);
      if (child === undefined) {
        const created = new RegoObject();
        node.set(segment, created);
        node = created;
      } else if (child instanceof RegoObject) {
        node = child;
      } else {
        covered = true;
        break;
      }
    }
    if (!covered) node.set(path[path.length - 1] as RegoValue, null);
  }
  return root;
}

function filterByTree(value: RegoValue, filter: RegoValue): RegoValue {
  if (filter === null || !(filter instanceof RegoObject)) return value;
  if (Array.isArray(value)) {
    const kept: RegoValue[] = [];
    value.forEach((element, index) => {
      const sub = filter.get(String(index));
      if (sub !== undefined) kept.push(filterByTree(element, sub));
    });
    return kept;
  }
  if (value instanceof RegoSet) {
    const kept = new RegoSet();
    for (const member of value.values()) {
      const sub = filter.get(member);
      if (sub !== undefined) kept.add(filterByTree(member, sub));
    }
    return kept;
  }
  if (value instanceof RegoObject) {
    const kept = new RegoObject();
    for (const [key, member] of value.entries()) {
      const sub = filter.get(key);
      if (sub !== undefined) kept.set(key, filterByTree(member, sub));
    }
    return kept;
  }
  return value;
}

/** The value without the tree's paths; `undefined` when the whole value is removed. */
function removeByTree(value: RegoValue, remove: RegoValue | undefined): RegoValue | undefined {
  if (remove === undefined) return value;
  if (remove === null) return undefined;
  if (!(remove instanceof RegoObject)) return value;
  if (Array.isArray(value)) {
    const kept: RegoValue[] = [];
    value.forEach((element, index) => {
      const rest = removeByTree(element, remove.get(String(index)));
      if (rest !== undefined) kept.push(rest);
    });
    return kept;
  }
  if (value instanceof RegoSet) {
    const kept = new RegoSet();
    for (const member of value.values()) {
      const rest = removeByTree(member, remove.get(member));
      if (rest !== undefined) kept.add(rest);
    }
    return kept;
  }
  if (value instanceof RegoObject) {
    const kept = new RegoObject();
    for (const [key, member] of value.entries()) {
      const rest = removeByTree(member, remove.get(key));
      if (rest !== undefined) kept.set(key, rest);
    }
    return kept;
  }
  return value;
}

// ---- json.patch (RFC 6902 over Rego values, sets included) ----

function arrayIndex(segment: RegoValue, length: number, allowEnd: boolean): number | undefined {
  let index: number | undefined;
  if (typeof segment === 'number' && Number.isInteger(segment)) index = segment;
  else if (typeof segment === 'string' && /^(0|[1-9][0-9]*)$/.test(segment)) index = Number(segment);
  else if (segment === '-' && allowEnd) index = length;
  if (index === undefined || index < 0 || index > (allowEnd ? length : length - 1)) return undefined;
  return index;
}

function childAt(value: RegoValue, segment: RegoValue): RegoValue | undefined {
  if (value instanceof RegoObject) return value.get(segment);
  if (value instanceof RegoSet) return value.has(segment) ? segment : undefined;
  if (Array.isArray(value)) {
    const index = arrayIndex(segment, value.length, false);
    return index === undefined ? undefined : value[index];
  }
  return undefined;
}

function valueAt(value: RegoValue, path: RegoValue[]): RegoValue | undefined {
  let current: RegoValue | undefined = value;
  for (const segment of path) {
    if (current === undefined) return undefined;
    current = childAt(current, segment);
  }
  return current;
}

/** Rebuilds `value` with the node at `path` replaced by `update(node)`; undefined when the path does not exist. */
function updateAt(value: RegoValue, path: RegoValue[], update: (parent: RegoValue, key: RegoValue) => RegoValue | undefined): RegoValue | undefined {
  if (path.length === 1) return update(value, path[0] as RegoValue);
  const [head, ...rest] = path as [RegoValue, ...RegoValue[]];
  const child = childAt(value, head);
  if (child === undefined) return undefined;
  const updated = updateAt(child, rest, update);
  if (updated === undefined) return undefined;
  if (value instanceof RegoObject) {
    const result = RegoObject.fromEntries(value.entries());
    result.set(head, updated);
    return result;
  }
  if (value instanceof RegoSet) {
    const result = RegoSet.of([...value.values()].filter((member) => !valuesEqual(member, head)));
    result.add(updated);
    return result;
  }
  const array = [...(value as RegoValue[])];
  array[arrayIndex(head, array.length, false) as number] = updated;
  return array;
}

function patchAdd(target: RegoValue, path: RegoValue[], value: RegoValue): RegoValue | undefined {
  if (path.length === 0) return value;
  return updateAt(target, path, (parent, key) => {
    if (parent instanceof RegoObject) {
      const result = RegoObject.fromEntries(parent.entries());
      result.set(key, value);
      return result;
    }
    if (parent instanceof RegoSet) {
      const result = RegoSet.of(parent.values());
      result.add(value);
      return result;
    }
    if (Array.isArray(parent)) {
      const index = arrayIndex(key, parent.length, true);
      if (index === undefined) return undefined;
      return [...parent.slice(0, index), value, ...parent.slice(index)];
    }
    return undefined;
  });
}

function patchRemove(target: RegoValue, path: RegoValue[]): RegoValue | undefined {
  if (path.length === 0) return undefined;
  return updateAt(target, path, (parent, key) => {
    if (parent instanceof RegoObject) {
      if (!parent.has(key)) return undefined;
      return RegoObject.fromEntries([...parent.entries()].filter(([existing]) => !valuesEqual(existing, key)));
    }
    if (parent instanceof RegoSet) {
      if (!parent.has(key)) return undefined;
      return RegoSet.of([...parent.values()].filter((member) => !valuesEqual(member, key)));
    }
    if (Array.isArray(parent)) {
      const index = arrayIndex(key, parent.length, false);
      if (index === undefined) return undefined;
      return [...parent.slice(0, index), ...parent.slice(index + 1)];
    }
    return undefined;
  });
}

function patchOperandError(message: string): BuiltinError {
  return new BuiltinError('eval_type_error', `json.patch: operand 2 ${message}`);
}

function jsonPatch(operands: RegoValue[]): RegoValue | undefined {
  let target: RegoValue | undefined = operand(operands, 0);
  const operations = arrayOperand('json.patch', operands, 2);
  for (const operation of operations) {
    if (!(operation instanceof RegoObject)) throw patchOperandError(`must be an array of JSON-Patch objects, but contains a ${typeName(operation)}`);
    const attribute = (attr: string): RegoValue => {
      const value = operation.get(attr);
      if (value === undefined) throw patchOperandError(`patch is missing '${attr}' attribute`);
      return value;
    };
    const pathAttribute = (attr: string): RegoValue[] => parsePath('json.patch', attribute(attr));
    const op = attribute('op');
    if (typeof op !== 'string') throw patchOperandError("patch attribute 'op' must be a string");
    const path = pathAttribute('path');
    const current: RegoValue = target;
    switch (op) {
      case 'add':
        target = patchAdd(current, path, attribute('value'));
        break;
      case 'remove':
        target = patchRemove(current, path);
        break;
      case 'replace': {
        const removed = patchRemove(current, path);
        target = removed === undefined ? undefined : patchAdd(removed, path, attribute('value'));
        break;
      }
      case 'move': {
        const from = pathAttribute('from');
        const moved = valueAt(current, from);
        const removed = moved === undefined ? undefined : patchRemove(current, from);
        target = removed === undefined || moved === undefined ? undefined : patchAdd(removed, path, moved);
        break;
      }
      case 'copy': {
        const copied = valueAt(current, pathAttribute('from'));
        target = copied === undefined ? undefined : patchAdd(current, path, copied);
        break;
      }
      case 'test': {
        const found = valueAt(current, path);
        target = found !== undefined && valuesEqual(found, attribute('value')) ? current : undefined;
        break;
      }
      default:
        throw patchOperandError('must be an array of JSON-Patch objects');
    }
    // Patches apply atomically: one failing operation makes the whole call undefined.
    if (target === undefined) return undefined;
  }
  return target;
}

// ---- object.subset ----

function arrayContainsRun(sup: RegoValue[], sub: RegoValue[]): boolean {
  if (sub.length === 0) return true;
  for (let start = 0; start + sub.length <= sup.length; start++) {
    if (sub.every((value, offset) => valuesEqual(value, sup[start + offset] as RegoValue))) return true;
  }
  return false;
}

function isSubset(sup: RegoValue, sub: RegoValue): boolean {
  if (sup instanceof RegoObject && sub instanceof RegoObject) {
    for (const [key, value] of sub.entries()) {
      const superValue = sup.get(key);
      if (superValue === undefined || !isSubset(superValue, value)) return false;
    }
    return true;
  }
  if (sup instanceof RegoSet && sub instanceof RegoSet) return [...sub.values()].every((member) => sup.has(member));
  if (Array.isArray(sup) && Array.isArray(sub)) return arrayContainsRun(sup, sub);
  if (Array.isArray(sup) && sub instanceof RegoSet) return [...sub.values()].every((member) => sup.some((element) => valuesEqual(element, member)));
  return valuesEqual(sup, sub);
}

function objectSubset(operands: RegoValue[]): RegoValue {
  const sup = operand(operands, 0);
  const sub = operand(operands, 1);
  const bothObjects = sup instanceof RegoObject && sub instanceof RegoObject;
  const collections = (sup instanceof RegoSet || Array.isArray(sup)) && (sub instanceof RegoSet || Array.isArray(sub));
  if (!bothObjects && !(collections && !(sup instanceof RegoSet && Array.isArray(sub)))) {
    throw new BuiltinError('eval_type_error', 'object.subset: both arguments must be objects, sets, or arrays (or an array and a set)');
  }
  return isSubset(sup, sub);
}

export const OBJECT_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  { name: 'object.get', arity: 3, implementation: objectGet },
  { name: 'object.keys', arity: 1, implementation: (operands) => RegoSet.of(objectOperand('object.keys', operands, 1).keys()) },
  {
    name: 'object.remove',
    arity: 2,
    implementation: (operands) => {
      const object = objectOperand('object.remove', operands, 1);
      const keys = RegoSet.of(keysOperand('object.remove', operands, 2));
      return RegoObject.fromEntries([...object.entries()].filter(([key]) => !keys.has(key)));
    },
  },
  {
    name: 'object.filter',
    arity: 2,
    implementation: (operands) => {
      const object = objectOperand('object.filter', operands, 1);
      const keys = RegoSet.of(keysOperand('object.filter', operands, 2));
      return RegoObject.fromEntries([...object.entries()].filter(([key]) => keys.has(key)));
    },
  },
  {
    name: 'object.union',
    arity: 2,
    implementation: (operands) => mergeObjects(objectOperand('object.union', operands, 1), objectOperand('object.union', operands, 2)),
  },
  { name: 'object.union_n', arity: 1, implementation: unionN },
  { name: 'object.subset', arity: 2, implementation: objectSubset },
  {
    name: 'json.filter',
    arity: 2,
    implementation: (operands) => {
      const object = objectOperand('json.filter', operands, 1);
      return filterByTree(object, pathsToTree(pathsOperand('json.filter', operands)));
    },
  },
  {
    name: 'json.remove',
    arity: 2,
    implementation: (operands) => {
      const object = objectOperand('json.remove', operands, 1);
      return removeByTree(object, pathsToTree(pathsOperand('json.remove', operands))) ?? new RegoObject();
    },
  },
  { name: 'json.patch', arity: 2, implementation: jsonPatch },
]);
