import type { JobHandler } from '../../jobs/job-worker.ts';
import type { ScheduledWork } from '../../jobs/job-schedules.ts';
import type { EventRecord, RecordedEvent } from '../organization-events/organization-events.service.ts';
import { isPublicDomainName } from '../../lib/public-domains.ts';
import { readCaBundle } from './certificates.acme.ts';
import { certificateRenewalSchedule } from './certificates.schedule.ts';
import {
  createCertificateIssueHandler,
  createCertificatesService,
  DEFAULT_CERTIFICATE_CHECK_INTERVAL_MS,
  type CertificateEvent,
  type CertificatesDeps,
  type CertificatesService,
  type HttpsProxyPort,
} from './certificates.service.ts';

/**
 * Automatic HTTPS as the composition root (app.ts) plugs it in: the certificates service, its schedule and job
 * handler, and the apps proxy's HTTPS once the local agent serves (`serveHttps`, given how to reach its proxy: the
 * engine's AppsProxyTlsLink, which the composition root opens). Nothing is ordered before that, nor ever when
 * SLIPWAY_APPS_HTTPS_PORT is unset.
 */
export interface HttpsWiringDeps extends Omit<CertificatesDeps, 'proxy' | 'audit' | 'acme' | 'configured' | 'issuerOf'> {
  settings: {
    httpsPort: number | undefined;
    directoryUrl: string;
    email: string | undefined;
    caBundleFile: string | undefined;
    /** SLIPWAY_HTTPS_PRIVATE_NAMES: who issues for the names no public CA does. */
    privateNames: 'installation-ca' | 'acme';
  };
  /** The audit log (organization-events): each outcome is recorded, a failure also announced to the webhooks. */
  organizationEvents(): { record(event: EventRecord): Promise<RecordedEvent>; announce(recorded: RecordedEvent, event: EventRecord): Promise<void> };
  checkIntervalMs?: number;
}

/** The apps proxy's HTTPS as the composition root opened it: where it listens, once it does. */
type ServedHttps = HttpsProxyPort & { close(): Promise<void>; readonly httpsAddress?: { port: number } | undefined };

/** The author of an event no person caused: the platform itself (the nil UUID, origin PLATFORM_INTERNAL). */
const PLATFORM_AUTHOR_ID = '00000000-0000-0000-0000-000000000000';

function eventOf(event: CertificateEvent): EventRecord {
  const { service } = event.subject;
  return {
    organization_id: service.organizationId,
    event_type: 'UPDATE',
    target_type: service.kind === 'CONTAINER' ? 'CONTAINER' : 'APPLICATION',
    target_id: service.id,
    target_name: service.name,
    sub_target_type: event.subTarget,
    operation_id: event.operationId,
    change: JSON.stringify(event.change),
    origin: 'PLATFORM_INTERNAL',
    author_type: 'USER',
    author_id: PLATFORM_AUTHOR_ID,
    triggered_by: 'Slipway',
    project_id: service.projectId,
    environment_id: service.environmentId,
    ip: null,
    user_agent: null,
    request_id: `certificate-${event.subject.domain}`,
    status_code: null,
    outcome: event.outcome,
  };
}

export function createHttpsWiring(deps: HttpsWiringDeps): {
  certificates: CertificatesService;
  schedule: ScheduledWork;
  handler: readonly [string, JobHandler];
  /** `open` connects to the apps proxy and opens its HTTPS port (undefined: it cannot here, and said why). */
  serveHttps(open: (port: number) => Promise<ServedHttps | undefined>): Promise<void>;
  /** The port HTTPS is served on now; undefined while it is not. */
  httpsPort(): number | undefined;
  close(): Promise<void>;
} {
  let link: ServedHttps | undefined;
  const certificates = createCertificatesService({
    ...deps,
    acme: { directoryUrl: deps.settings.directoryUrl, email: deps.settings.email, caBundle: readCaBundle(deps.settings.caBundleFile) },
    configured: deps.settings.httpsPort !== undefined,
    issuerOf: (hostname) => (deps.settings.privateNames === 'acme' || isPublicDomainName(hostname.replace(/^\*\./, '')) ? 'acme' : 'installation-ca'),
    proxy: () => link,
    async audit(event) {
      const record = eventOf(event);
      const recorded = await deps.organizationEvents().record(record);
      if (event.outcome === 'FAILURE') await deps.organizationEvents().announce(recorded, record);
    },
  });
  return {
    certificates,
    schedule: certificateRenewalSchedule(certificates, deps.checkIntervalMs ?? DEFAULT_CERTIFICATE_CHECK_INTERVAL_MS),
    handler: createCertificateIssueHandler(certificates),
    async serveHttps(open) {
      const port = deps.settings.httpsPort;
      if (port === undefined || link !== undefined) return;
      const opened = await open(port);
      if (opened === undefined) return;
      link = opened;
      // The root exists before any name needs it, so people can trust it first (GET /certificateAuthority).
      if (deps.settings.privateNames === 'installation-ca') await certificates.ensureInstallationRoot();
      await certificates.publish();
      // What became due while no proxy served HTTPS (domains verified meanwhile) is ordered now.
      await certificates.orderDue();
      await certificates.orderServiceHostnames();
    },
    httpsPort: () => link?.httpsAddress?.port,
    async close() {
      const opened = link;
      link = undefined;
      await opened?.close();
    },
  };
}
