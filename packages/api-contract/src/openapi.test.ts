import { describe, expect, it } from 'vitest';
import { createOpenApiDocument } from './openapi.js';

/** Every `$ref` anywhere in a JSON value. */
function refs(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refs);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === '$ref' && typeof inner === 'string' ? [inner] : refs(inner),
  );
}

describe('the generated OpenAPI document', () => {
  const document = createOpenApiDocument();

  it('resolves every reference to a component of its own, nested named schemas included', () => {
    const schemas = document.components.schemas;
    expect(Object.keys(schemas)).not.toContain('__shared');
    const targets = new Set(refs(document));
    expect(targets).toContain('#/components/schemas/Tile');
    for (const target of targets) {
      expect(target).toMatch(/^#\/components\/schemas\/\w+$/);
      expect(schemas, target).toHaveProperty(target.slice('#/components/schemas/'.length));
    }
  });

  it('describes parameters as a client sends them: optional with their default, path ones required', () => {
    const sessions = document.paths['/usage/sessions']?.get;
    expect(sessions?.parameters).toEqual([
      expect.objectContaining({
        name: 'range',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ default: '24h' }) as unknown,
      }),
      expect.objectContaining({ name: 'from', in: 'query', required: false }),
      expect.objectContaining({ name: 'to', in: 'query', required: false }),
      ...['auth', 'role', 'browser', 'device', 'os', 'referrer'].map(
        (name): unknown => expect.objectContaining({ name, in: 'query', required: false }) as unknown,
      ),
      expect.objectContaining({ name: 'limit', in: 'query', required: false }),
    ]);
    const timeline = document.paths['/usage/sessions/{id}/timeline']?.get;
    expect(timeline?.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    ]);
    expect(Object.keys(timeline?.responses ?? {})).toEqual(['200', '400', '401', '403', '404', '503']);
  });
});
