import { runCommand } from './startup/run-command.ts';

/**
 * The `paddock` program's commands but the runner (runner.ts): each loads only its own modules, so a
 * command that builds an image or installs programs never loads the server.
 */
const [command, ...args] = process.argv.slice(2);
if (command === 'docker-image') {
  const { runDockerImage } = await import('./commands/docker-image.ts');
  await runCommand((config) => runDockerImage(config, args));
} else if (command === 'harnesses') {
  const { runHarnesses } = await import('./commands/harnesses.ts');
  await runCommand((config) => runHarnesses(config, args));
} else {
  const { serve } = await import('./commands/serve.ts');
  await runCommand(serve);
}
