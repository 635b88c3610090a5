import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/**
 * pino with secrets kept out: credentials in headers and any `secrets`/`env` field are redacted.
 * On a terminal each line is for a person to read (time, level, message, fields); otherwise (a
 * service manager, a container's log, a pipe) it is one JSON object, for a log collector.
 */
export function createLogger(level: string, terminal = process.stdout.isTTY === true): Logger {
  const options = {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        '*.secrets',
        '*.env',
        'secrets',
        'env',
        '*.token',
      ],
      censor: '[redacted]',
    },
  };
  if (!terminal) return pino(options);
  // In this thread and synchronous, so no line is lost when start-up fails and the process exits.
  return pino(
    options,
    pretty({ sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
  );
}
