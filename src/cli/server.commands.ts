import { Command } from 'commander';
import { AppError } from '../lib/errors.ts';
import { CliError } from './sign-in.ts';
import { email, nonBlank, wholeNumber } from './command-options.ts';

/** The commands that run Slipway's own processes or act on its database directly: server, agent, git, admin. */
export function registerServerCommands(program: Command): void {
  program
    .command('server')
    .description('serve the API (the same as npm start)')
    .action(async () => {
      const { runServer } = await import('../main.ts');
      const { loadConfigOrExit } = await import('../config.ts');
      await runServer(loadConfigOrExit());
    });

  program
    .command('agent')
    .description("run a cluster's agent on this host (enrolls once with the cluster's one-time token)")
    .requiredOption('--control-plane <url>', 'the Slipway API the agent works for, e.g. https://slipway.example.com')
    .option('--enrollment-token <token>', "the one-time token of the cluster's operator bootstrap (first start only)")
    .option('--enrollment-token-file <file>', 'the same token read from a file, e.g. a mounted Secret (first start only)')
    .option('--health-address <host:port>', 'serve /healthz and /readyz (enrolled and heartbeating) here, for probes')
    .option('--driver <driver>', 'what runs the workloads: local (processes on this host) or kubernetes (a cluster through its API)', 'local')
    .option('--kubeconfig <file>', 'kubernetes: the kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config, or the pod service account)')
    .option('--context <name>', 'kubernetes: the kubeconfig context to use (default: its current context)')
    .option('--ingress-class <name>', "kubernetes: the Ingress class of public hostnames (default: the cluster's default class)")
    .option('--cert-manager-issuer <name>', "kubernetes: the cert-manager ClusterIssuer that certifies public hostnames (their Ingress gets a TLS section); none: plain HTTP")
    .option('--build-registry <host/path>', 'kubernetes: where APPLICATION and git JOB images built in the cluster are pushed, as <host/path>/<service>:<commit>')
    .option('--build-registry-auth <file>', "kubernetes: a dockerconfigjson with the build registry's login (push, and the workloads' pull)")
    .option('--build-image-builder <builder>', 'kubernetes: kaniko or buildkit (rootless) (default: $SLIPWAY_KUBERNETES_BUILDER, kaniko)')
    .option('--helm-binary <file>', 'kubernetes: the helm that renders HELM services (default: $SLIPWAY_HELM_BINARY, else helm on the PATH)')
    .option('--workflow-runner-image <image>', 'kubernetes: the image AGENTIC_WORKFLOW services run (default: $SLIPWAY_WORKFLOW_RUNNER_IMAGE)')
    .option('--build-git-image <image>', 'kubernetes: the image that clones the commit of a build (it runs sh and git)')
    .option('--state-dir <dir>', 'where workloads, data and the credential live (default: $SLIPWAY_DATA_DIR/agent)')
    .option('--concurrency <n>', 'how many tasks (builds, database starts, teardowns) run at once, 1 to 20 (default: $SLIPWAY_AGENT_CONCURRENCY, 4)', wholeNumber(1, 20))
    .action(async (options: { controlPlane: string; enrollmentToken?: string; enrollmentTokenFile?: string; healthAddress?: string; driver: string; stateDir?: string; concurrency?: number; kubeconfig?: string; context?: string; ingressClass?: string; certManagerIssuer?: string; helmBinary?: string; workflowRunnerImage?: string; buildRegistry?: string; buildRegistryAuth?: string; buildImageBuilder?: string; buildGitImage?: string }) => {
      const { loadConfigOrExit } = await import('../config.ts');
      const { runAgentCommand } = await import('./agent-command.ts');
      try {
        await runAgentCommand(loadConfigOrExit(), options, (line) => process.stdout.write(`${line}\n`));
      } catch (error) {
        if (error instanceof CliError) {
          process.stderr.write(`slipway: ${error.message}\n`);
          process.exitCode = 1;
          return;
        }
        throw error;
      }
    });

  program
    .command('apps-proxy', { hidden: true })
    .description("the local agent's apps proxy, which outlives the server; only the agent starts it (docs/local-engine.md)")
    .action(async () => {
      const { runAppsProxyProcess } = await import('../engine/local/apps-proxy.process.ts');
      await runAppsProxyProcess();
    });

  program
    .command('git')
    .description('git helpers for local work')
    .command('serve <directory>')
    .description('serve the bare repositories under <directory> (<name>.git) over HTTP, to deploy local work to a local Slipway')
    .option('--port <port>', 'port to listen on (0: any free port)', '9418')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .action(async (directory: string, options: { port: string; host: string }) => {
      const port = Number(options.port);
      if (!/^\d+$/.test(options.port) || port > 65535) {
        process.stderr.write(`slipway: --port must be an integer from 0 to 65535, got "${options.port}"\n`);
        process.exitCode = 1;
        return;
      }
      const { resolve } = await import('node:path');
      const { startGitHttpServer } = await import('../git/git-http-server.ts');
      const { address } = await startGitHttpServer(resolve(directory), port, options.host);
      process.stdout.write(`serving the repositories under ${resolve(directory)} at http://${address.address}:${address.port}/<name>.git\n`);
    });

  const admin = program.command('admin').description('installation administration (works on the database directly)');

  admin
    .command('bootstrap')
    .description('create the first user, an organization they own and an ADMIN API token (shown only once)')
    .requiredOption('--email <email>', 'e-mail of the first administrator', email)
    .requiredOption('--organization <name>', 'name of the organization to create', nonBlank)
    .option('--name <name>', 'display name of the administrator', nonBlank)
    .option('--json', 'print {"user_id","organization_id","api_token"} as JSON')
    .action(async (options: { email: string; organization: string; name?: string; json?: boolean }) => {
      try {
        const { loadConfigOrExit } = await import('../config.ts');
        const { bootstrapInstallation } = await import('./admin-bootstrap.ts');
        const result = await bootstrapInstallation(loadConfigOrExit(), options);
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify(result)}\n`);
        } else {
          process.stdout.write(
            `user:         ${result.user_id}\norganization: ${result.organization_id}\n` +
              `api token:    ${result.api_token}\n\nThe token is shown only now. Use it as "Authorization: Token <token>".\n`,
          );
        }
      } catch (error) {
        if (error instanceof AppError) {
          process.stderr.write(`slipway: ${error.message}\n`);
          process.exitCode = 1;
          return;
        }
        throw error;
      }
    });

  admin
    .command('rotate-signing-key')
    .description('make a new key sign the built-in identity provider\'s tokens; the old key stays published until its tokens expire')
    .action(async () => {
      const { loadConfigOrExit } = await import('../config.ts');
      const { rotateInstallationSigningKey } = await import('./admin-keys.ts');
      const kid = await rotateInstallationSigningKey(loadConfigOrExit());
      process.stdout.write(`signing key: ${kid}\n`);
    });

  /** Runs an operator command on the database; its refusals (AppError) end the process with one line and status 1. */
  async function operatorCommand(run: () => Promise<string>): Promise<void> {
    try {
      process.stdout.write(await run());
    } catch (error) {
      if (error instanceof AppError) {
        process.stderr.write(`slipway: ${error.message}\n`);
        process.exitCode = 1;
        return;
      }
      throw error;
    }
  }

  const creditCode = admin.command('credit-code').description('credit codes organizations redeem with addCreditCode');
  creditCode
    .command('create')
    .description('create a single-use credit code (shown only once)')
    .requiredOption('--amount <amount>', 'credit in currency units, e.g. 25.00')
    .requiredOption('--expires <date>', 'last day it can be redeemed (YYYY-MM-DD) or an ISO-8601 date-time')
    .option('--json', 'print the code as JSON')
    .action(async (options: { amount: string; expires: string; json?: boolean }) =>
      operatorCommand(async () => {
        const { loadConfigOrExit } = await import('../config.ts');
        const { createCreditCode } = await import('./admin-billing.ts');
        const created = await createCreditCode(loadConfigOrExit(), options);
        return options.json === true
          ? `${JSON.stringify(created)}\n`
          : `credit code: ${created.code}\namount:      ${(created.amount_in_cents / 100).toFixed(2)} ${created.currency_code}\nexpires:     ${created.expires_at}\n\nThe code is shown only now.\n`;
      }),
    );

  const invoices = admin.command('invoices').description('invoices of every organization');
  invoices
    .command('generate')
    .description('invoice a finished billing period for every organization (again: no-op for those already invoiced)')
    .requiredOption('--period <YYYY-MM>', 'the billing month')
    .action(async (options: { period: string }) =>
      operatorCommand(async () => {
        const { loadConfigOrExit } = await import('../config.ts');
        const { generateInvoices } = await import('./admin-billing.ts');
        const result = await generateInvoices(loadConfigOrExit(), options.period);
        return `period ${result.period}: ${result.created} invoice(s) created, ${result.existing} already there\n`;
      }),
    );
  invoices
    .command('mark-paid <invoiceId>')
    .description('record that an invoice was paid (by transfer, or any payment outside Slipway)')
    .option('--reference <text>', 'the payment reference, kept with the invoice')
    .action(async (invoiceId: string, options: { reference?: string }) =>
      operatorCommand(async () => {
        const { loadConfigOrExit } = await import('../config.ts');
        const { markInvoicePaid } = await import('./admin-billing.ts');
        const invoice = await markInvoicePaid(loadConfigOrExit(), invoiceId, options.reference);
        return `invoice ${invoice.id} (${invoice.period}) is ${invoice.status}\n`;
      }),
    );

  // A LOCAL cluster's workloads run on this host: only the organizations the operator allows may create or deploy onto one.
  const localClusters = admin.command('local-clusters').description('which organizations may create LOCAL clusters (workloads on this host) and deploy onto them');
  const ORGANIZATION_OPTION = ['--organization <id|name>', 'the organization, by id or name', nonBlank] as const;
  localClusters
    .command('allow')
    .description('let an organization create LOCAL clusters and deploy onto them')
    .requiredOption(...ORGANIZATION_OPTION)
    .option('--json', 'print what changed as JSON')
    .action(async (options: { organization: string; json?: boolean }) =>
      operatorCommand(async () => {
        const { loadConfigOrExit } = await import('../config.ts');
        const { allowOrganization } = await import('./admin-local-clusters.ts');
        return allowOrganization(loadConfigOrExit(), options.organization, options);
      }),
    );
  localClusters
    .command('deny')
    .description('refuse an organization\'s future LOCAL cluster creations and deployments (what runs keeps running)')
    .requiredOption(...ORGANIZATION_OPTION)
    .option('--json', 'print what changed as JSON')
    .action(async (options: { organization: string; json?: boolean }) =>
      operatorCommand(async () => {
        const { loadConfigOrExit } = await import('../config.ts');
        const { denyOrganization } = await import('./admin-local-clusters.ts');
        return denyOrganization(loadConfigOrExit(), options.organization, options);
      }),
    );
  localClusters
    .command('list')
    .description('the allowed organizations, and those holding LOCAL clusters without a grant')
    .option('--json', 'print the lists as JSON')
    .action(async (options: { json?: boolean }) =>
      operatorCommand(async () => {
        const { loadConfigOrExit } = await import('../config.ts');
        const { listGrants } = await import('./admin-local-clusters.ts');
        return listGrants(loadConfigOrExit(), options);
      }),
    );

  // The installation's own database into one file and back (docs/operations.md, "Backing up and restoring").
  admin
    .command('backup')
    .description('write a backup of the installation\'s database to one file (0600); the secret key is not in it: keep that apart')
    .option('--output <file>', 'the file to write, which must not exist (default: <SLIPWAY_BACKUP_DIR>/slipway-<UTC timestamp>.backup)', nonBlank)
    .action(async (options: { output?: string }) =>
      operatorCommand(async () => {
        const { loadConfigOrExit } = await import('../config.ts');
        const { backupInstallation } = await import('./admin-backup.ts');
        return backupInstallation(loadConfigOrExit(), options);
      }),
    );
  admin
    .command('restore <file>')
    .description('restore a backup into an empty data directory or database, checking that the configured secret key is the one it was taken under')
    .action(async (file: string) =>
      operatorCommand(async () => {
        const { loadConfigOrExit } = await import('../config.ts');
        const { restoreInstallation } = await import('./admin-backup.ts');
        return restoreInstallation(loadConfigOrExit(), file);
      }),
    );
}
