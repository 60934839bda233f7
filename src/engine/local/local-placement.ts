import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { internalHostnameResolver } from '../internal-hostnames.ts';

/**
 * The local driver's placement (docs/decisions.md, "Placement"): where on this host each service is reached inside
 * its environment. The control plane names services by intent — `<name>.<environment id>.slipway.internal` and the
 * ports they declare — and this host has no DNS for those names, so the driver stands a loopback address of its own
 * for each service (in 127.64.0.0/10: four million addresses, all the loopback interface on Linux), serves the
 * declared ports there (internal-addresses.ts), and writes the address in place of the name wherever a workload's
 * variables hold it.
 *
 * The addresses live in `<stateDir>/placement.json`, kept for a service's life on this host and released by its
 * teardown. A driver that finds no such file takes over the addresses its running applications were recorded with
 * (they came from the control plane before placement moved here), so nothing running moves.
 */
export class LocalPlacement {
  private readonly file: string;
  private readonly addresses: Map<string, string>;

  constructor(stateDir: string, recorded: () => Iterable<{ serviceId: string; address: string | undefined }>) {
    this.file = join(stateDir, 'placement.json');
    const stored = readPlacement(this.file);
    this.addresses = stored ?? new Map();
    if (stored === undefined) {
      for (const { serviceId, address } of recorded()) {
        if (address !== undefined && ![...this.addresses.values()].includes(address)) this.addresses.set(serviceId, address);
      }
      this.save();
    }
  }

  /** The service's address on this host: the one it holds, else a new one no other service holds. */
  addressOf(serviceId: string): string {
    const held = this.addresses.get(serviceId);
    if (held !== undefined) return held;
    const taken = new Set(this.addresses.values());
    for (let attempt = 0; ; attempt += 1) {
      const candidate = addressCandidate(serviceId, attempt);
      if (taken.has(candidate)) continue;
      this.addresses.set(serviceId, candidate);
      this.save();
      return candidate;
    }
  }

  release(serviceId: string): void {
    if (this.addresses.delete(serviceId)) this.save();
  }

  /** What resolves the internal hostnames of these services in a value: each becomes its service's address here. */
  resolver(peers: ReadonlyArray<{ serviceId: string; hostname: string }>): (value: string) => string {
    return internalHostnameResolver(new Map(peers.map((peer) => [peer.hostname, () => this.addressOf(peer.serviceId)])));
  }

  private save(): void {
    const temporary = `${this.file}.tmp`;
    writeFileSync(temporary, JSON.stringify({ addresses: Object.fromEntries(this.addresses) }, null, 2), { mode: 0o600 });
    renameSync(temporary, this.file);
  }
}

/** The stored placement; undefined when there is none yet (a new host, or an agent from before placement moved here). */
function readPlacement(file: string): Map<string, string> | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const parsed = JSON.parse(raw) as { addresses?: Record<string, unknown> };
  const addresses = new Map<string, string>();
  for (const [serviceId, address] of Object.entries(parsed.addresses ?? {})) {
    if (typeof address === 'string' && LOOPBACK_ADDRESS.test(address)) addresses.set(serviceId, address);
  }
  return addresses;
}

const LOOPBACK_ADDRESS = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** A candidate address for a service, spread by its id; `attempt` moves on when another service holds it. */
function addressCandidate(serviceId: string, attempt: number): string {
  const digest = createHash('sha256').update(`${serviceId}:${attempt}`).digest();
  return `127.${64 + ((digest[0] ?? 0) & 63)}.${digest[1] ?? 0}.${((digest[2] ?? 0) % 254) + 1}`;
}
