import { CliError } from './sign-in.ts';

/**
 * Where `slipway signup` gets the password: all of standard input with --password-stdin (one trailing newline
 * dropped), else a prompt on the terminal that does not echo, asked twice. Never an argument: arguments end up in
 * shell history and in every process listing.
 */
export async function passwordFromStdin(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

function promptHidden(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream, question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const finish = (outcome: () => void) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
      outcome();
    };
    const onData = (data: string) => {
      for (const character of data) {
        if (character === '\r' || character === '\n') return finish(() => resolve(typed));
        if (character === '\u0003') return finish(() => reject(new CliError('cancelled')));
        if (character === '\u007f' || character === '\b') typed = typed.slice(0, -1);
        else typed += character;
      }
    };
    stdin.on('data', onData);
  });
}

export async function passwordFromTerminal(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream): Promise<string> {
  if (stdin.isTTY !== true) throw new CliError('no terminal to ask for the password on; pipe it in with --password-stdin');
  const password = await promptHidden(stdin, stderr, 'Password: ');
  const repeated = await promptHidden(stdin, stderr, 'Repeat the password: ');
  if (password !== repeated) throw new CliError('the passwords do not match');
  return password;
}
