import { Command } from 'commander';
import type { EnvironmentOptions } from './services.ts';
import { type WaitOptions } from './wait.ts';
import { type OrganizationOptions } from './team.ts';
import { clientCommand, io, nonBlank, wholeNumber, ENV_REQUIRED_OPTION, PROJECT_OF_ENV_OPTION, SERVER_OPTION, JSON_OPTION, WAIT_OPTION, TIMEOUT_OPTION, YES_OPTION, ORG_OPTION } from './command-options.ts';

/** Clusters, environments, services, variables and their deployments (the implementations load when a command runs). */
export function registerDeploymentCommands(program: Command): void {
  // Deployments (src/cli/services.ts and its neighbours, loaded when one of these commands runs).

  const clustersCommand = program.command('cluster').description('the clusters of the current organization');

  clustersCommand
    .command('list')
    .description('the organization\'s clusters with their kinds and states')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: OrganizationOptions) => clientCommand(async () => (await import('./clusters.ts')).listClusters(options, io)));

  clustersCommand
    .command('create')
    .description('create a cluster: LOCAL (this host; the operator must allow it) unless --kind names another')
    .argument('<name>', 'its name', nonBlank)
    .option('--kind <kind>', 'LOCAL (default), MANAGED or PARTIALLY_MANAGED')
    .option('--provider <provider>', 'the cloud provider (default ON_PREMISE for LOCAL), e.g. AWS, GCP, SCW')
    .option('--region <region>', 'the provider\'s region (default local for LOCAL)')
    .option('--description <text>', 'what it is for')
    .option('--instance-type <type>', 'the nodes\' instance type')
    .option('--min-nodes <n>', 'the fewest nodes, 1 to 200', wholeNumber(1, 200))
    .option('--max-nodes <n>', 'the most nodes, 1 to 200', wholeNumber(1, 200))
    .option('--production', 'a production cluster')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((name: string, options: OrganizationOptions & { kind?: string; provider?: string; region?: string; description?: string; instanceType?: string; minNodes?: number; maxNodes?: number; production?: boolean }) =>
      clientCommand(async () => (await import('./clusters.ts')).createCluster(name, options, io)),
    );

  clustersCommand
    .command('deploy')
    .description('deploy a cluster (install or update what runs the workloads)')
    .argument('<cluster>', 'the cluster\'s id or name')
    .option('--dry-run', 'check and render only; change nothing')
    .option(...WAIT_OPTION)
    .option(...TIMEOUT_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((cluster: string, options: OrganizationOptions & WaitOptions & { dryRun?: boolean }) =>
      clientCommand(async () => (await import('./clusters.ts')).deployCluster(cluster, options, io)),
    );

  clustersCommand
    .command('status')
    .description('a cluster\'s state and why (every cluster\'s state without one named)')
    .argument('[cluster]', 'the cluster\'s id or name')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((cluster: string | undefined, options: OrganizationOptions) =>
      clientCommand(async () => (await import('./clusters.ts')).clusterStatus(cluster, options, io)),
    );

  clustersCommand
    .command('install-manifests')
    .description("what installs a self-managed cluster's Kubernetes agent, with a new one-time enrollment token: kubectl apply -f - (or, --helm-values, helm install -f -)")
    .argument('<cluster>', 'the cluster\'s id or name')
    .option('--helm-values', 'the values of the charts/slipway-agent Helm chart instead of plain manifests')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .action((cluster: string, options: OrganizationOptions & { helmValues?: boolean }) =>
      clientCommand(async () => (await import('./clusters.ts')).clusterInstallManifests(cluster, options, io)),
    );

  const environmentsCommand = program.command('env').description('the environments of a project');

  environmentsCommand
    .command('create')
    .description('create an environment in a project (on the organization\'s only cluster unless --cluster names one)')
    .argument('<name>', 'its name (unique within the project)', nonBlank)
    .requiredOption('--project <id|name>', 'the project')
    .option('--mode <mode>', 'PRODUCTION, STAGING, DEVELOPMENT (default) or PREVIEW')
    .option('--cluster <id|name>', 'the cluster it runs on')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((name: string, options: OrganizationOptions & { project: string; mode?: string; cluster?: string }) =>
      clientCommand(async () => (await import('./services.ts')).createEnvironment(name, options, io)),
    );

  environmentsCommand
    .command('list')
    .description('the environments of a project')
    .requiredOption('--project <id|name>', 'the project')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: OrganizationOptions & { project: string }) => clientCommand(async () => (await import('./services.ts')).listEnvironments(options, io)));

  const ENVIRONMENT_ARGUMENT = ['<env>', 'the environment\'s id, or its name (with --project when several projects have one so named)'] as const;

  for (const [action, description] of [
    ['deploy', 'deploy every service of an environment (databases first)'],
    ['stop', 'stop the deployed services of an environment'],
    ['restart', 'restart the deployed services of an environment'],
  ] as const) {
    environmentsCommand
      .command(action)
      .description(description)
      .argument(...ENVIRONMENT_ARGUMENT)
      .option(...PROJECT_OF_ENV_OPTION)
      .option(...WAIT_OPTION)
      .option(...TIMEOUT_OPTION)
      .option(...ORG_OPTION)
      .option(...SERVER_OPTION)
      .option(...JSON_OPTION)
      .action((env: string, options: EnvironmentOptions & WaitOptions) =>
        clientCommand(async () => (await import('./environments.ts')).runEnvironmentAction(action, env, options, io)),
      );
  }

  environmentsCommand
    .command('status')
    .description('where an environment stands: its state, and whether what runs is up to date')
    .argument(...ENVIRONMENT_ARGUMENT)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((env: string, options: EnvironmentOptions) => clientCommand(async () => (await import('./environments.ts')).environmentStatus(env, options, io)));

  environmentsCommand
    .command('delete')
    .description('delete an environment with its services (what runs is stopped)')
    .argument(...ENVIRONMENT_ARGUMENT)
    .option(...YES_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((env: string, options: EnvironmentOptions & { yes?: boolean }) =>
      clientCommand(async () => (await import('./environments.ts')).deleteEnvironment(env, options, io)),
    );

  environmentsCommand
    .command('clone')
    .description('create an environment like another (its mode and cluster; its variables with --with-variables)')
    .argument(...ENVIRONMENT_ARGUMENT)
    .argument('<name>', 'the new environment\'s name', nonBlank)
    .option('--mode <mode>', 'PRODUCTION, STAGING, DEVELOPMENT or PREVIEW (default: the source\'s)')
    .option('--cluster <id|name>', 'the cluster it runs on (default: the source\'s)')
    .option('--with-variables', 'copy the source\'s environment variables and secrets')
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((env: string, name: string, options: EnvironmentOptions & { mode?: string; cluster?: string; withVariables?: boolean }) =>
      clientCommand(async () => (await import('./environments.ts')).cloneEnvironment(env, name, options, io)),
    );

  const servicesCommand = program.command('service').description('the services of an environment');

  servicesCommand
    .command('create')
    .description('create a service: --settings carries the kind\'s request fields as JSON; the git flags fill in git_repository')
    .argument('<kind>', 'application, container, database, job, helm or terraform')
    .argument('<name>', 'its name (unique within the environment)', nonBlank)
    .requiredOption(...ENV_REQUIRED_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option('--repository <url>', 'the git repository it is built from')
    .option('--branch <branch>', 'the branch to build (default main)')
    .option('--root-path <path>', 'the directory of the repository to build')
    .option('--git-token <id|name>', 'the git token that reads a private repository')
    .option('--settings <json>', 'the kind\'s other request fields, as a JSON object')
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((kind: string, name: string, options: EnvironmentOptions & { env: string; repository?: string; branch?: string; rootPath?: string; gitToken?: string; settings?: string }) =>
      clientCommand(async () => (await import('./services.ts')).createService(kind, name, options, io)),
    );

  servicesCommand
    .command('list')
    .description('the services of an environment with their states and URLs')
    .requiredOption(...ENV_REQUIRED_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: EnvironmentOptions & { env: string }) => clientCommand(async () => (await import('./services.ts')).listServices(options, io)));

  const SERVICE_ARGUMENT = ['<service>', 'the service\'s id, or its name with --env'] as const;
  const ENV_OPTION = ['--env <id|name>', 'the environment of a service named by name'] as const;

  for (const [action, description] of [
    ['redeploy', 'deploy again what runs (its commit and tag) with the settings and variables as they are now'],
    ['restart', 'restart what runs, as deployed'],
    ['stop', 'stop what runs'],
  ] as const) {
    servicesCommand
      .command(action)
      .description(description)
      .argument(...SERVICE_ARGUMENT)
      .option(...ENV_OPTION)
      .option(...PROJECT_OF_ENV_OPTION)
      .option(...WAIT_OPTION)
      .option(...TIMEOUT_OPTION)
      .option(...ORG_OPTION)
      .option(...SERVER_OPTION)
      .option(...JSON_OPTION)
      .action((service: string, options: EnvironmentOptions & WaitOptions) =>
        clientCommand(async () => (await import('./service-actions.ts')).runServiceAction(action, service, options, io)),
      );
  }

  servicesCommand
    .command('delete')
    .description('delete a service with its variables and history (what runs is stopped)')
    .argument(...SERVICE_ARGUMENT)
    .option(...YES_OPTION)
    .option(...ENV_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((service: string, options: EnvironmentOptions & { yes?: boolean }) =>
      clientCommand(async () => (await import('./service-actions.ts')).deleteService(service, options, io)),
    );

  servicesCommand
    .command('open')
    .description('print the URL of a service; --browser opens it too, from a terminal')
    .argument(...SERVICE_ARGUMENT)
    .option('--browser', 'open the URL in your browser as well (only when run from a terminal)')
    .option(...ENV_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((service: string, options: EnvironmentOptions & { browser?: boolean }) =>
      clientCommand(async () => (await import('./service-actions.ts')).openService(service, options, io)),
    );

  const variablesCommand = program.command('var').description('variables and secrets of a project, environment or service');

  const VARIABLE_SCOPE_OPTIONS = [
    ['--project <id|name>', 'on the project (with --env: the project of an environment named by name)'],
    ['--env <id|name>', 'on the environment (with --service: the environment of a service named by name)'],
    ['--service <id|name>', 'on the service'],
  ] as const;

  /** A `var` subcommand with the scope options, the organization, the server and --json. */
  function variableCommand(name: string, description: string): Command {
    const command = variablesCommand.command(name).description(description);
    for (const [flags, description] of VARIABLE_SCOPE_OPTIONS) command.option(flags, description);
    return command;
  }

  type VariableScopeOptions = OrganizationOptions & { project?: string; env?: string; service?: string; secret?: boolean; reveal?: boolean };

  variableCommand('set', 'set a variable at the narrowest scope named; setting a name again replaces it')
    .argument('<key>', 'its name')
    .argument('<value>', 'its value ($NAME makes it an alias of NAME)')
    .option('--secret', 'a secret: write-only, encrypted at rest')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((key: string, value: string, options: VariableScopeOptions) => clientCommand(async () => (await import('./variables.ts')).setVariable(key, value, options, io)));

  variableCommand('list', 'every variable and secret the scope sees, with its scope and where its value comes from (secrets masked)')
    .option('--reveal', 'show the hidden built-in values too (database credentials, hostnames); needs the secrets:reveal permission')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: VariableScopeOptions) => clientCommand(async () => (await import('./variables.ts')).listVariables(options, io)));

  variableCommand('unset', 'remove a variable or secret set at the narrowest scope named')
    .argument('<key>', 'its name')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((key: string, options: VariableScopeOptions) => clientCommand(async () => (await import('./variables.ts')).unsetVariable(key, options, io)));

  variableCommand('import', 'set the variables of a .env file at the narrowest scope named: created, updated or unchanged')
    .argument('<file>', 'a .env file (KEY=value lines, # comments, quotes, export prefixes)')
    .option('--secret', 'import them as secrets')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((file: string, options: VariableScopeOptions) => clientCommand(async () => (await import('./variables.ts')).importVariables(file, options, io)));

  program
    .command('deploy')
    .description('deploy a service with its settings and variables as they are now; the cluster\'s agent carries it out')
    .argument(...SERVICE_ARGUMENT)
    .option(...ENV_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option('--commit <sha>', 'the git commit to build (default: the branch\'s head)')
    .option('--tag <tag>', 'the image tag to run (containers and jobs)')
    .option(...WAIT_OPTION)
    .option(...TIMEOUT_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((service: string, options: EnvironmentOptions & WaitOptions & { commit?: string; tag?: string }) =>
      clientCommand(async () => (await import('./services.ts')).deployService(service, options, io)),
    );

  program
    .command('status')
    .description('where a service stands: its state, and whether what runs is up to date')
    .argument(...SERVICE_ARGUMENT)
    .option(...ENV_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((service: string, options: EnvironmentOptions) =>
      clientCommand(async () => (await import('./services.ts')).serviceStatus(service, options, io)),
    );

  program
    .command('history')
    .description('a service\'s deployments (deploys, stops, restarts), newest first')
    .argument(...SERVICE_ARGUMENT)
    .option('--limit <n>', 'how many, 1 to 100 (default 20)', wholeNumber(1, 100))
    .option(...ENV_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((service: string, options: EnvironmentOptions & { limit?: number }) =>
      clientCommand(async () => (await import('./service-actions.ts')).serviceHistory(service, options, io)),
    );

  program
    .command('logs')
    .description('the log of a service\'s newest deployment (or --deployment); --follow prints its output as it comes, deployment after deployment, until Ctrl-C')
    .argument(...SERVICE_ARGUMENT)
    .option(...ENV_OPTION)
    .option(...PROJECT_OF_ENV_OPTION)
    .option(...ORG_OPTION)
    .option('--deployment <id>', 'another deployment of the service (with --follow: until that deployment settles)')
    .option('-f, --follow', 'keep printing the service\'s output as it is printed, across deployments, until Ctrl-C')
    .option('--since <when>', 'only lines printed since an ISO-8601 time or a duration ago: 30s, 10m, 2h, 1d')
    .option('--tail <lines>', 'only the last lines (with --follow: before following), up to 1000')
    .option('--instance <name>', 'only lines of this instance of the workload (a line\'s pod_name)')
    .option('--stream <stream>', 'only lines of stdout, stderr or system (repeat it, or separate with commas)', (value: string, previous: string[] = []) => [...previous, value])
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((service: string, options: EnvironmentOptions & { deployment?: string; follow?: boolean; since?: string; tail?: string; instance?: string; stream?: string[] }) =>
      clientCommand(async () => (await import('./service-logs.ts')).serviceLogs(service, options, io)),
    );
}
