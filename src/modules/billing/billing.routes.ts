import { Type } from 'typebox';
import { authenticatedErrors, errorResponses, HTTP_STATUS } from '../../http/errors.ts';
import { sendDownload } from '../../http/downloads.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import { Organization } from '../organizations/organizations.schemas.ts';
import {
  BillingExternalId,
  BillingInfo,
  BillingInfoRequest,
  BillingStatus,
  ClusterCostParams,
  CostRange,
  CreditCard,
  CreditCardParams,
  CreditCardRequest,
  CreditCardResponseList,
  DownloadParams,
  Invoice,
  InvoiceLink,
  InvoiceParams,
  InvoiceResponseList,
  OrganizationBillingUsageReportRequest,
  OrganizationBillingUsageReportResponse,
  OrganizationChangePlanRequest,
  OrganizationCreditCodeRequest,
  OrganizationCurrentCost,
  SignedQuery,
} from './billing.schemas.ts';
import type { BillingService } from './billing.service.ts';

const TAGS = ['Billing'];
/** A PDF file, sent as bytes. */
const PdfBytes = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' });
/** SPEC.md's "200 with no body". */
const EmptyBody = Type.Unsafe<undefined>({ description: 'No body' });
const DOWNLOAD_TAGS = ['Billing downloads'];
/** Answers of the signed download routes: 404 for a link Slipway never signed, 403 for an expired one. */
const DOWNLOAD_ERRORS = errorResponses('forbidden', 'not_found');

export function registerBillingRoutes(app: FastifyTypeBox, billing: BillingService): void {
  app.get(
    '/organization/:organizationId/currentCost',
    {
      schema: {
        operationId: 'getOrganizationCurrentCost',
        summary: "Get the current period's cost",
        description:
          'The plan, the days of trial left, when the period renews and the cost of the period so far; readable by anyone ' +
          'who reads the organization. 404 when the caller is not a member.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: OrganizationCurrentCost, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing-cost:read', target: 'organization' } },
    },
    async (request) => billing.getOrganizationCurrentCost(request.params.organizationId),
  );

  app.post(
    '/organization/:organizationId/creditCode',
    {
      schema: {
        operationId: 'addCreditCode',
        summary: 'Redeem a credit code',
        description:
          "Adds a credit code's amount to the organization's credits; each code is redeemed once. Answers 200 with no " +
          'body. 400 for an unknown, expired or already used code; 403 below ADMIN.',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationCreditCodeRequest,
        response: { 200: EmptyBody, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:update', target: 'organization' } },
    },
    async (request, reply) => {
      await billing.addCreditCode(request.params.organizationId, request.body.code);
      // SPEC.md: 200 with no body.
      return reply.code(HTTP_STATUS.ok).send(undefined);
    },
  );

  app.post(
    '/organization/:organizationId/changePlan',
    {
      schema: {
        operationId: 'changePlan',
        summary: 'Change the plan',
        description:
          'Moves the organization to another plan (COMMUNITY, STARTUP, ...) and answers the organization. The first move ' +
          'onto a paid plan starts its trial; coming back later does not start another. 400 for a missing or unknown ' +
          'plan; 403 below ADMIN.',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationChangePlanRequest,
        response: { 200: Organization, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:update', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.ok).send(await billing.changePlan(request.params.organizationId, request.body.plan)),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/currentCost',
    {
      schema: {
        operationId: 'getClusterCurrentCost',
        summary: "Estimate a cluster's monthly cost",
        description:
          'The monthly cost range of a cluster from its node range and instance type (nodes x price x 730 hours); what it ' +
          'is charged never exceeds the maximum. 404 when there is no such cluster in the organization.',
        tags: TAGS,
        params: ClusterCostParams,
        response: { 200: CostRange, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing-cost:read', target: 'organization' } },
    },
    async (request) => billing.getClusterCurrentCost(request.params.organizationId, request.params.clusterId),
  );

  app.get(
    '/organization/:organizationId/billingInfo',
    {
      schema: {
        operationId: 'getOrganizationBillingInfo',
        summary: 'Get the billing details',
        description: 'Who is billed: names, e-mail, address, country and VAT number (null until set). 403 below ADMIN.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: BillingInfo, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => billing.getOrganizationBillingInfo(request.params.organizationId),
  );

  app.put(
    '/organization/:organizationId/billingInfo',
    {
      schema: {
        operationId: 'editOrganizationBillingInfo',
        summary: 'Edit the billing details',
        description:
          'Replaces who is billed: first and last name, e-mail, address, city, zip and country code are required; ' +
          'invoices and their mails go to this e-mail. 400 naming invalid fields; 403 below ADMIN.',
        tags: TAGS,
        params: OrganizationParams,
        body: BillingInfoRequest,
        response: { 200: BillingInfo, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:update', target: 'organization' } },
    },
    async (request) => billing.editOrganizationBillingInfo(request.params.organizationId, request.body),
  );

  app.get(
    '/organization/:organizationId/billingStatus',
    {
      schema: {
        operationId: 'getOrganizationBillingStatus',
        summary: 'Get the billing status',
        description:
          "Whether the organization's billing is valid, and a message saying why not; while it is invalid, deployments " +
          'are refused. Startup (invoiced plans): invalid once an invoice is unpaid for a week. Community (credit plans): ' +
          'invalid when no credit is left. 404 when the caller is not a member.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: BillingStatus, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing-cost:read', target: 'organization' } },
    },
    async (request) => billing.getOrganizationBillingStatus(request.params.organizationId),
  );

  app.post(
    '/organization/:organizationId/billingUsageReport',
    {
      schema: {
        operationId: 'generateBillingUsageReport',
        summary: 'Generate a usage report',
        description:
          'A CSV of metered usage between from and to, at a signed URL until report_expiration_in_seconds pass, and a URL ' +
          'to delete it sooner. 400 for an invalid range or expiry; 403 below ADMIN.',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationBillingUsageReportRequest,
        response: { 200: OrganizationBillingUsageReportResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:update', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.ok).send(await billing.generateBillingUsageReport(request.params.organizationId, request.body)),
  );

  app.get(
    '/organization/:organizationId/billingExternalId',
    {
      schema: {
        operationId: 'getOrganizationBillingExternalId',
        summary: 'Get the billing customer id',
        description:
          "The organization's customer id for billing systems: `cus_` and 24 hex digits derived from the organization id, " +
          'stable for its life. 403 below ADMIN.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: BillingExternalId, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => billing.getOrganizationBillingExternalId(request.params.organizationId),
  );

  app.get(
    '/organization/:organizationId/invoice',
    {
      schema: {
        operationId: 'listOrganizationInvoice',
        summary: 'List invoices',
        description: "The organization's monthly invoices, newest first, with their period, amount and status (paid or not). 403 below ADMIN.",
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: InvoiceResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => ({ results: await billing.listOrganizationInvoice(request.params.organizationId) }),
  );

  app.get(
    '/organization/:organizationId/invoice/:invoiceId',
    {
      schema: {
        operationId: 'getOrganizationInvoice',
        summary: 'Get an invoice',
        description: 'One invoice with its period, amount, status and when it was paid. 403 below ADMIN; 404 when there is no such invoice in the organization.',
        tags: TAGS,
        params: InvoiceParams,
        response: { 200: Invoice, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => billing.getOrganizationInvoice(request.params.organizationId, request.params.invoiceId),
  );

  app.get(
    '/organization/:organizationId/invoice/:invoiceId/download',
    {
      schema: {
        operationId: 'getOrganizationInvoicePDF',
        summary: "Get a link to an invoice's PDF",
        description:
          'A signed link to the invoice PDF, valid for an hour (url and expires_at); the link needs no credential. 403 ' +
          'below ADMIN; 404 for an unknown invoice.',
        tags: TAGS,
        params: InvoiceParams,
        response: { 200: InvoiceLink, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => billing.getOrganizationInvoicePDF(request.params.organizationId, request.params.invoiceId),
  );

  app.post(
    '/organization/:organizationId/downloadInvoices',
    {
      schema: {
        operationId: 'organizationDownloadAllInvoices',
        summary: 'Mail all invoices',
        description:
          "Mails every invoice as a PDF attachment to the billing e-mail (else the owner's verified e-mail), in the " +
          'background: the answer is 202. 403 below ADMIN.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 202: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:update', target: 'organization' } },
    },
    async (request, reply) => {
      await billing.organizationDownloadAllInvoices(request.params.organizationId);
      return reply.code(HTTP_STATUS.accepted).send(null);
    },
  );

  app.get(
    '/organization/:organizationId/creditCard',
    {
      schema: {
        operationId: 'listOrganizationCreditCards',
        summary: 'List credit cards',
        description: "The organization's cards: brand, last four digits and expiry only. 403 below ADMIN.",
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: CreditCardResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => ({ results: await billing.listOrganizationCreditCards(request.params.organizationId) }),
  );

  app.post(
    '/organization/:organizationId/creditCard',
    {
      schema: {
        operationId: 'addCreditCard',
        summary: 'Add a credit card',
        description:
          'Checks the card (Luhn, network, cvv, expiry) and keeps only its brand, last four digits and expiry; the number ' +
          'and cvv are never stored. 400 naming what is wrong with the card; 403 below ADMIN.',
        tags: TAGS,
        params: OrganizationParams,
        body: CreditCardRequest,
        response: { 201: CreditCard, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:update', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await billing.addCreditCard(request.params.organizationId, request.body)),
  );

  app.delete(
    '/organization/:organizationId/creditCard/:creditCardId',
    {
      schema: {
        operationId: 'deleteCreditCard',
        summary: 'Delete a credit card',
        description: 'Removes a card. 403 below ADMIN; 404 when there is no such card in the organization.',
        tags: TAGS,
        params: CreditCardParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'billing:update', target: 'organization' } },
    },
    async (request, reply) => {
      await billing.deleteCreditCard(request.params.organizationId, request.params.creditCardId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  // The signed links: public routes, the signature is the credential (billing.links.ts).

  app.get(
    '/billing/invoice/:id/pdf',
    {
      schema: {
        operationId: 'downloadInvoicePdfBySignedLink',
        summary: 'Download an invoice PDF',
        description:
          'The invoice PDF behind a link answered by getOrganizationInvoicePDF; the signature in the link is the ' +
          'credential. 403 when the link expired (ask for a new one); 404 for a link Slipway never signed.',
        tags: DOWNLOAD_TAGS,
        security: [],
        params: DownloadParams,
        querystring: SignedQuery,
        produces: ['application/pdf'],
        response: {
          200: { description: 'The invoice', content: { 'application/pdf': { schema: PdfBytes } } },
          ...DOWNLOAD_ERRORS,
        },
      },
      config: { access: { public: true } },
    },
    async (request, reply) => {
      const file = await billing.downloadInvoicePdf(request.params.id, request.query.expires, request.query.signature);
      return sendDownload(reply, 'application/pdf', file);
    },
  );

  app.get(
    '/billing/usageReport/:id',
    {
      schema: {
        operationId: 'downloadBillingUsageReportBySignedLink',
        summary: 'Download a usage report',
        description:
          'The CSV usage report behind a report_url; the signature in the link is the credential. 403 when the link ' +
          'expired; 404 for a link Slipway never signed or a deleted report.',
        tags: DOWNLOAD_TAGS,
        security: [],
        params: DownloadParams,
        querystring: SignedQuery,
        produces: ['text/csv'],
        response: {
          200: { description: 'The report', content: { 'text/csv': { schema: Type.String() } } },
          ...DOWNLOAD_ERRORS,
        },
      },
      config: { access: { public: true } },
    },
    async (request, reply) => {
      const file = await billing.downloadUsageReport(request.params.id, request.query.expires, request.query.signature);
      return sendDownload(reply, 'text/csv; charset=utf-8', file);
    },
  );

  app.delete(
    '/billing/usageReport/:id',
    {
      schema: {
        operationId: 'deleteBillingUsageReportBySignedLink',
        summary: 'Delete a usage report',
        description:
          'Deletes a usage report through its delete_report_url before it expires. 403 when the link expired; 404 for a ' +
          'link Slipway never signed or a report already deleted.',
        tags: DOWNLOAD_TAGS,
        security: [],
        params: DownloadParams,
        querystring: SignedQuery,
        response: { 204: NoContent, ...DOWNLOAD_ERRORS },
      },
      config: { access: { public: true } },
    },
    async (request, reply) => {
      await billing.deleteUsageReportByLink(request.params.id, request.query.expires, request.query.signature);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
