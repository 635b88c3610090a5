import type { LanguageModelV4FunctionTool } from '@ai-sdk/provider';

type JsonSchema = LanguageModelV4FunctionTool['inputSchema'];

// Gemini's schema keeps its 64-bit integer fields as JSON strings ("1"), as protobuf's JSON does.
const countFields = new Set([
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
]);
// Gemini-only keys with no JSON Schema meaning.
const droppedFields = new Set(['nullable', 'propertyOrdering', 'example']);

/**
 * A function declaration's `parameters` (Gemini's OpenAPI-style schema: `type: 'OBJECT'`,
 * `nullable`, counts as strings) as the JSON Schema the AI SDK's tools take. `parametersJsonSchema`
 * is JSON Schema already and is passed as it is.
 */
export function geminiSchemaToJsonSchema(schema: Record<string, unknown>): JsonSchema {
  return convert(schema) as JsonSchema;
}

function convert(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(convert);
  if (value === null || typeof value !== 'object') return value;
  const schema = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(schema)) {
    if (droppedFields.has(key)) continue;
    if (key === 'type') out.type = typeName(field);
    else if (countFields.has(key)) out[key] = typeof field === 'string' ? Number(field) : field;
    else if (key === 'properties' && field !== null && typeof field === 'object') {
      out.properties = Object.fromEntries(Object.entries(field).map(([name, sub]) => [name, convert(sub)]));
    } else if (key === 'items' || key === 'anyOf') out[key] = convert(field);
    else out[key] = field;
  }
  if (out.type === undefined) delete out.type;
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/** `'STRING'` → `'string'`; `TYPE_UNSPECIFIED` says nothing. */
function typeName(type: unknown): unknown {
  if (typeof type !== 'string') return type;
  const name = type.toLowerCase();
  return name === 'type_unspecified' ? undefined : name;
}
