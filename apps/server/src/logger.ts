import pino, { type Logger } from 'pino';

/** pino with secrets kept out: credentials in headers and any `secrets`/`env` field are redacted. */
export function createLogger(level: string): Logger {
  return pino({
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
  });
}
