import type { Ingress } from 'kubernetes-types/networking/v1.js';
import { advancedBoolean, advancedInteger, advancedString } from '../advanced-settings.ts';
import { namespaceOf, serviceLabels, workloadNameOf, type ServiceIdentity } from './kubernetes-names.ts';
import type { KubeObject } from './kubernetes-workload.ts';

/**
 * The one Ingress of a service with public hostnames (docs/kubernetes.md, "Ingress and HTTPS"), for a CONTAINER,
 * an APPLICATION and a HELM chart's exposed Service alike: a rule per hostname to one backend Service and port.
 *
 * - HTTPS: with the agent's `--cert-manager-issuer <ClusterIssuer>`, the Ingress asks cert-manager for a certificate
 *   of its hostnames (`cert-manager.io/cluster-issuer`) kept in `Secret <name>-tls`, which its `tls` section serves;
 *   the ingress controller then redirects plain HTTP as `network.ingress.force_ssl_redirect` says.
 * - The service's advanced settings `network.ingress.*` become the annotations of ingress-nginx, the controller the
 *   reference's settings were written for (body size, timeouts, buffering, CORS, allow/deny lists, sticky sessions);
 *   another controller ignores them.
 */
export interface IngressOptions {
  /** The Ingress class (--ingress-class); the cluster's default class when undefined. */
  className?: string | undefined;
  /** The cert-manager ClusterIssuer that certifies the hostnames (--cert-manager-issuer); no TLS when undefined. */
  clusterIssuer?: string | undefined;
}

export interface IngressRender {
  service: ServiceIdentity;
  hostnames: readonly string[];
  backend: { serviceName: string; port: number };
  options: IngressOptions;
  /** The service's settings, for their advanced settings. */
  settings: { advanced_settings?: unknown };
}

const NGINX = 'nginx.ingress.kubernetes.io';

/** The ingress-nginx annotations of the service's `network.ingress.*` advanced settings (those it has). */
export function ingressAnnotationsOf(settings: { advanced_settings?: unknown }, tls: boolean): Record<string, string> {
  const annotations: Record<string, string> = {};
  const integer = (key: string, annotation: string, unit = '') => {
    const value = advancedInteger(settings, `network.ingress.${key}`);
    if (value !== undefined) annotations[`${NGINX}/${annotation}`] = `${value}${unit}`;
  };
  const text = (key: string, annotation: string) => {
    const value = advancedString(settings, `network.ingress.${key}`);
    if (value !== undefined && value !== '') annotations[`${NGINX}/${annotation}`] = value;
  };
  integer('proxy_body_size_mb', 'proxy-body-size', 'm');
  integer('proxy_connect_timeout_seconds', 'proxy-connect-timeout');
  integer('proxy_send_timeout_seconds', 'proxy-send-timeout');
  integer('proxy_read_timeout_seconds', 'proxy-read-timeout');
  integer('proxy_buffer_size_kb', 'proxy-buffer-size', 'k');
  integer('send_timeout_seconds', 'send-timeout');
  text('proxy_buffering', 'proxy-buffering');
  text('proxy_request_buffering', 'proxy-request-buffering');
  text('whitelist_source_range', 'whitelist-source-range');
  text('denylist_source_range', 'denylist-source-range');
  if (advancedBoolean(settings, 'network.ingress.enable_cors') === true) {
    annotations[`${NGINX}/enable-cors`] = 'true';
    text('cors_allow_origin', 'cors-allow-origin');
    text('cors_allow_methods', 'cors-allow-methods');
    text('cors_allow_headers', 'cors-allow-headers');
  }
  if (advancedBoolean(settings, 'network.ingress.enable_sticky_session') === true) {
    annotations[`${NGINX}/affinity`] = 'cookie';
    annotations[`${NGINX}/affinity-mode`] = 'persistent';
  }
  if (tls) {
    const redirect = String(advancedBoolean(settings, 'network.ingress.force_ssl_redirect') ?? true);
    annotations[`${NGINX}/ssl-redirect`] = redirect;
    annotations[`${NGINX}/force-ssl-redirect`] = redirect;
  }
  return annotations;
}

export function renderIngress(render: IngressRender): Ingress & KubeObject {
  const name = workloadNameOf(render.service);
  const tls = render.options.clusterIssuer !== undefined;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: namespaceOf(render.service.environmentId),
      labels: serviceLabels(render.service),
      annotations: {
        ...ingressAnnotationsOf(render.settings, tls),
        ...(render.options.clusterIssuer === undefined ? {} : { 'cert-manager.io/cluster-issuer': render.options.clusterIssuer }),
      },
    },
    spec: {
      ...(render.options.className === undefined ? {} : { ingressClassName: render.options.className }),
      ...(tls ? { tls: [{ hosts: [...render.hostnames], secretName: `${name}-tls` }] } : {}),
      rules: render.hostnames.map((host) => ({
        host,
        http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: render.backend.serviceName, port: { number: render.backend.port } } } }] },
      })),
    },
  };
}
