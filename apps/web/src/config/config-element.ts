/**
 * The text of the element the server writes the runtime configuration into (JSON), '' where there is
 * none. Its own module, so the first chunk can read it without the schema (runtime-config.ts validates).
 */
export function configElementText(doc: Document = document): string {
  return doc.getElementById('gatehouse-config')?.textContent ?? '';
}
