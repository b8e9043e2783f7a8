/**
 * The logger contract actors, storage and handlers write to. Production's implementation is pino
 * (runtime/logger.ts); tests may pass any object of this shape.
 */

/** Leveled logger; `fields` become structured log fields (pino-style). */
export interface Logger {
  debug(fields: object | string, msg?: string): void;
  info(fields: object | string, msg?: string): void;
  warn(fields: object | string, msg?: string): void;
  error(fields: object | string, msg?: string): void;
  child(bindings: object): Logger;
}
