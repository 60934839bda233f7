import Negotiator from 'negotiator';
import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { liveStreamsEndedOnClose, serveLiveStream } from '../../http/live-stream.ts';
import { requirePrincipal } from '../../http/route-access.ts';
import { badRequest } from '../../lib/errors.ts';
import { OrganizationParams } from '../../protocol/wire.ts';
import { CHANGE_STREAM_MEDIA_TYPES } from './organization-changes.schemas.ts';
import type { OrganizationChangesService } from './organization-changes.service.ts';

/** Keeps proxies from cutting a quiet stream: an SSE comment, which readers skip. */
const HEARTBEAT = ': keep-alive\n\n';

export function registerOrganizationChangeRoutes(app: FastifyTypeBox, changes: OrganizationChangesService): void {
  // The stream never ends by itself: the server's shutdown ends it, or the close would wait for its readers.
  const liveStreams = liveStreamsEndedOnClose(app);

  app.get(
    '/organization/:organizationId/changes',
    {
      schema: {
        operationId: 'streamOrganizationChanges',
        summary: "Follow what changes in an organization's pages",
        description:
          'A live stream (Server-Sent Events, Accept: text/event-stream) of "look again" events, one `data:` line each: ' +
          '`{"type": "service" | "environment" | "cluster", "id", "environment_id"?, "project_id"?}` when a service\'s ' +
          "state, deployment or workload health, an environment's state, or a cluster's status or agent connection " +
          'changes, on any replica. Ids only: the reader reads what it shows again. Only changes of what the caller may ' +
          'read are sent (a custom role by project and environment type, a policy token by its policy on the GET of the ' +
          'project or cluster). A `: keep-alive` comment every 15 s while nothing changes. Not resumable: a reader that ' +
          'reconnects reads what it shows again; the stream ends by itself when changes may have been missed, for that ' +
          'reason. 400 unless Accept names text/event-stream; 404 when the caller is not a member of the organization.',
        tags: ['Organization Main Calls'],
        params: OrganizationParams,
        produces: CHANGE_STREAM_MEDIA_TYPES,
        response: {
          200: { description: 'The live stream of changes', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...authenticatedErrors(),
        },
      },
      config: { access: { permission: 'organization:read', target: 'organization' } },
    },
    async (request, reply) => {
      // Asked for by name: a request without Accept (or with */* alone) would otherwise open a stream that never ends.
      const named = (request.headers.accept ?? '').toLowerCase().includes('text/event-stream');
      if (!named || new Negotiator(request).mediaType(CHANGE_STREAM_MEDIA_TYPES) === undefined) {
        throw badRequest('the changes of an organization are a stream', [{ field: '/accept', message: 'needs Accept: text/event-stream' }]);
      }
      const principal = requirePrincipal(request);
      await serveLiveStream(
        request,
        reply,
        'text/event-stream; charset=utf-8',
        liveStreams,
        (writer) =>
          changes.followOrganizationChanges(principal, request.params.organizationId, {
            signal: writer.signal,
            opened: writer.opened,
            emit: (change) => writer.write(`data: ${JSON.stringify(change)}\n\n`),
            heartbeat: () => writer.write(HEARTBEAT),
          }),
        // Missed signals: the reader is told to read everything again, by reconnecting.
        (end) => (end === 'missed' ? 'event: missed\ndata: {}\n\n' : ''),
      );
      return reply;
    },
  );
}
