import type { X509Certificate } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

/**
 * A real TLS client for the HTTPS suites: what the apps port and the HTTPS port answer on loopback for a host name
 * (SNI and Host), trusting only the given root.
 */

/** The certificate the HTTPS port presents for `servername`, and whether it chains to `root`. The socket stays open. */
export function tlsHandshake(port: number, servername: string, root: string): Promise<{ authorized: boolean; error: string | null; certificate: X509Certificate; socket: TLSSocket }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, ca: root, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerX509Certificate();
      if (raw === undefined) {
        reject(new Error('no certificate'));
        return;
      }
      resolve({ authorized: socket.authorized, error: socket.authorizationError === null ? null : String(socket.authorizationError), certificate: raw, socket });
    });
    socket.once('error', reject);
  });
}

export interface HttpsAnswer {
  status: number;
  body: string;
  /** The serial number of the certificate the answer came over. */
  serial: string;
  /** Its Strict-Transport-Security header, if any. */
  hsts: string | undefined;
}

/** `GET path` over HTTPS with SNI and Host `hostname`, trusting only `root`. */
export function httpsGet(port: number, hostname: string, root: string, requestPath = '/'): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const sent = httpsRequest({ host: '127.0.0.1', port, servername: hostname, headers: { host: hostname }, path: requestPath, ca: root, agent: false, timeout: 10_000 }, (response) => {
      const serial = (response.socket as TLSSocket).getPeerX509Certificate()?.serialNumber ?? '';
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, serial, hsts: response.headers['strict-transport-security'] }));
    });
    sent.on('timeout', () => sent.destroy(new Error('no answer within 10 s')));
    sent.on('error', reject);
    sent.end();
  });
}

/** A plain HTTP request with Host `hostname`: its status, redirect target, body and Strict-Transport-Security header. */
export function httpRequestTo(port: number, hostname: string, requestPath: string, method = 'GET'): Promise<{ status: number; location: string | undefined; body: string; hsts: string | undefined }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: '127.0.0.1', port, method, headers: { host: hostname }, path: requestPath, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, location: response.headers.location, body, hsts: response.headers['strict-transport-security'] }));
    });
    sent.on('error', reject);
    sent.end();
  });
}
