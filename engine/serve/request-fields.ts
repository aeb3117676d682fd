// Typed reads of a JSON request body's fields. Every wrong type or out-of-range value is a
// 400 naming the field; absent (or null, as many clients send for "default") is undefined.
import { badField } from './api-error';

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function present(body: JsonObject, name: string): unknown {
  const v = body[name];
  return v === null ? undefined : v;
}

export function optionalNumber(
  body: JsonObject,
  name: string,
  range: { min?: number; max?: number; minExclusive?: boolean } = {},
): number | undefined {
  const v = present(body, name);
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw badField(name, `'${name}' must be a number`);
  }
  const { min, max, minExclusive } = range;
  if (min !== undefined && (minExclusive ? v <= min : v < min)) {
    throw badField(name, `'${name}' must be ${minExclusive ? '>' : '≥'} ${min}, got ${v}`);
  }
  if (max !== undefined && v > max) throw badField(name, `'${name}' must be ≤ ${max}, got ${v}`);
  return v;
}

export function optionalInteger(
  body: JsonObject,
  name: string,
  range: { min?: number; max?: number } = {},
): number | undefined {
  const v = optionalNumber(body, name, range);
  if (v !== undefined && !Number.isInteger(v)) {
    throw badField(name, `'${name}' must be an integer, got ${v}`);
  }
  return v;
}

export function optionalBoolean(body: JsonObject, name: string): boolean | undefined {
  const v = present(body, name);
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw badField(name, `'${name}' must be true or false`);
  return v;
}

export function optionalString(body: JsonObject, name: string): string | undefined {
  const v = present(body, name);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badField(name, `'${name}' must be a string`);
  return v;
}

export function requiredString(body: JsonObject, name: string): string {
  const v = optionalString(body, name);
  if (v === undefined) throw badField(name, `'${name}' is required`);
  return v;
}

/** The most stop strings one request may give (OpenAI allows 4; llama.cpp clients send more). */
export const MAX_STOP_STRINGS = 16;

/** `stop`: a string or an array of non-empty strings. */
export function stopStrings(body: JsonObject, name = 'stop'): string[] {
  const v = present(body, name);
  if (v === undefined) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string')) {
    throw badField(name, `'${name}' must be a string or an array of strings`);
  }
  const stops = (list as string[]).filter((s) => s !== '');
  if (stops.length > MAX_STOP_STRINGS) {
    throw badField(name, `'${name}' may hold at most ${MAX_STOP_STRINGS} strings`);
  }
  return stops;
}
