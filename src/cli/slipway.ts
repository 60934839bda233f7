import { Command } from 'commander';
import { SLIPWAY_VERSION } from '../lib/version.ts';
import { CliError } from './sign-in.ts';
import { clientCommand, io } from './command-options.ts';
import { registerDeploymentCommands } from './deployments.commands.ts';
import { registerServerCommands } from './server.commands.ts';
import { registerTeamCommands } from './team.commands.ts';

// The `slipway` command. Server-side commands take their configuration from the same SLIPWAY_* variables as the
// server and load it (and the server's modules) only when run, so client commands start quickly. The commands are
// registered by server.commands.ts, team.commands.ts and deployments.commands.ts; their implementations load on use.

/**
 * A reader that goes away early (`slipway service list | head -1`) is not a failure: the first EPIPE on standard
 * output or standard error ends the process at once and quietly, with the status it already had (0 unless the
 * command had failed). Node ignores SIGPIPE, so without this the write's error surfaces as a stack trace.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw error;
  });
}

const program = new Command('slipway').description('Slipway deployment platform').version(SLIPWAY_VERSION, '-V, --version', 'print the version').showHelpAfterError();

registerServerCommands(program);
registerTeamCommands(program);
registerDeploymentCommands(program);

program
  .command('completion')
  .description('print a shell completion script: source <(slipway completion bash), or zsh')
  .argument('<shell>', 'bash or zsh')
  .action((shell: string) =>
    clientCommand(async () => {
      const { COMPLETION_SHELLS, completionScript } = await import('./completion.ts');
      const known = COMPLETION_SHELLS.find((candidate) => candidate === shell);
      if (known === undefined) throw new CliError(`no completion for "${shell}"; one of ${COMPLETION_SHELLS.join(', ')}`);
      io.out(completionScript(program, known));
    }),
  );

await program.parseAsync(process.argv);
