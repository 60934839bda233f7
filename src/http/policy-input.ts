import type { FastifyRequest } from 'fastify';

/**
 * The input document a policy API token's Rego policy sees for a request (DESIGN.md §5):
 *
 *   { method, path: [segments], route, operation_id, params, query, body, organization_id, token: {id, name} }
 *
 * `path` holds the decoded segments of the request path (`/organization/<id>/project` → ["organization", "<id>",
 * "project"]); `route` is the matched route template with `{param}` placeholders as the API description writes
 * it; `body` is the parsed JSON body, or null when there is none.
 *
 * `query` is the query string as sent (text: the policy runs before validation), with one exception: on a route that
 * can reveal secret values, its reveal parameter (`reveal`) is always there as a boolean — true exactly when the
 * request asks for plain values, as the authorizer reads the ask — so a read-only policy can say
 * `not input.query.reveal` and no spelling of the parameter slips past it.
 */
export interface PolicyInput {
  method: string;
  path: string[];
  route: string;
  operation_id: string | null;
  params: unknown;
  query: unknown;
  body: unknown;
  organization_id: string;
  token: { id: string; name: string };
}

/** A revealing route's query parameter, and whether this request asks for plain values (route-access.ts). */
export interface RevealQueryInput {
  parameter: string;
  asked: boolean;
}

function pathSegments(url: string): string[] {
  const path = url.split('?', 1)[0] ?? '';
  return path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    });
}

/** `/organization/:organizationId/project` → `/organization/{organizationId}/project`. */
function routeTemplate(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function policyInputOf(
  request: FastifyRequest,
  organizationId: string,
  token: { id: string; name: string },
  reveal?: RevealQueryInput,
): PolicyInput {
  const schema = request.routeOptions.schema as { operationId?: unknown } | undefined;
  const query = request.query ?? {};
  return {
    method: request.method,
    path: pathSegments(request.url),
    route: routeTemplate(request.routeOptions.url ?? ''),
    operation_id: typeof schema?.operationId === 'string' ? schema.operationId : null,
    params: request.params ?? {},
    query: reveal === undefined ? query : { ...(query as Record<string, unknown>), [reveal.parameter]: reveal.asked },
    body: request.body ?? null,
    organization_id: organizationId,
    token,
  };
}
