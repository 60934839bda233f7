import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireUserId } from '../../http/route-access.ts';
import { AccountInfo, AccountInfoEditRequest, type AccountService } from './users.account.ts';

const TAGS = ['Account Info'];

export function registerAccountRoutes(app: FastifyTypeBox, account: AccountService): void {
  app.get(
    '/account',
    {
      schema: {
        operationId: 'getAccountInformation',
        summary: 'Get your account',
        description:
          "The signed-in person's own profile: name, picture and e-mail as their identity provider states them, and the " +
          'communication e-mail they set. 403 for an API token, which belongs to an organization, not to a person.',
        tags: TAGS,
        response: { 200: AccountInfo, ...authenticatedErrors() },
      },
      config: { access: { permission: 'account:read', target: 'none' } },
    },
    async (request) => account.getAccountInformation(requireUserId(request)),
  );

  app.put(
    '/account',
    {
      schema: {
        operationId: 'editAccountInformation',
        summary: 'Edit your account',
        description:
          "Sets the e-mail the signed-in person wants to be written to (stored in lower case); the rest of the profile " +
          'follows their identity provider. 400 for a value that is not an e-mail address; 403 for an API token.',
        tags: TAGS,
        body: AccountInfoEditRequest,
        response: { 200: AccountInfo, ...authenticatedErrors() },
      },
      config: { access: { permission: 'account:update', target: 'none' } },
    },
    async (request) => account.editAccountInformation(requireUserId(request), request.body),
  );
}
