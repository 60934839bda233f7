import { Type } from 'typebox';
import { authenticatedErrors, errorResponses, HTTP_STATUS } from '../../http/errors.ts';
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
        description: 'The plan, the days of trial left, when the period renews and the cost of the period so far.',
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
        description: 'Redeems a credit code once; an unknown, expired or used code answers 400.',
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
        description: 'The monthly cost range of a cluster from its node range and instance type; its cost never exceeds the maximum.',
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
      schema: { operationId: 'getOrganizationBillingInfo', tags: TAGS, params: OrganizationParams, response: { 200: BillingInfo, ...authenticatedErrors() } },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => billing.getOrganizationBillingInfo(request.params.organizationId),
  );

  app.put(
    '/organization/:organizationId/billingInfo',
    {
      schema: {
        operationId: 'editOrganizationBillingInfo',
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
        description: 'Startup: invalid once an invoice is unpaid for a week. Community: invalid when no credit is left.',
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
        description: 'A CSV of metered usage between from and to, at a signed URL until report_expiration_in_seconds pass.',
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
      schema: { operationId: 'listOrganizationInvoice', tags: TAGS, params: OrganizationParams, response: { 200: InvoiceResponseList, ...authenticatedErrors() } },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => ({ results: await billing.listOrganizationInvoice(request.params.organizationId) }),
  );

  app.get(
    '/organization/:organizationId/invoice/:invoiceId',
    {
      schema: { operationId: 'getOrganizationInvoice', tags: TAGS, params: InvoiceParams, response: { 200: Invoice, ...authenticatedErrors() } },
      config: { access: { permission: 'billing:read', target: 'organization' } },
    },
    async (request) => billing.getOrganizationInvoice(request.params.organizationId, request.params.invoiceId),
  );

  app.get(
    '/organization/:organizationId/invoice/:invoiceId/download',
    {
      schema: {
        operationId: 'getOrganizationInvoicePDF',
        description: 'A signed link to the invoice PDF, valid for an hour.',
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
        description: 'Mails every invoice as a PDF attachment to the billing e-mail (else the owner).',
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
        description: 'Checks the card (Luhn, network, cvv, expiry) and keeps only its brand, last four digits and expiry.',
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
      schema: { operationId: 'deleteCreditCard', tags: TAGS, params: CreditCardParams, response: { 204: NoContent, ...authenticatedErrors() } },
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
        description: 'The invoice PDF behind a link answered by getOrganizationInvoicePDF.',
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
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .header('cache-control', 'private, no-store')
        .send(file.content);
    },
  );

  app.get(
    '/billing/usageReport/:id',
    {
      schema: {
        operationId: 'downloadBillingUsageReportBySignedLink',
        description: 'The CSV usage report behind a report_url.',
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
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .header('cache-control', 'private, no-store')
        .send(file.content);
    },
  );

  app.delete(
    '/billing/usageReport/:id',
    {
      schema: {
        operationId: 'deleteBillingUsageReportBySignedLink',
        description: 'Deletes a usage report through its delete_report_url.',
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
