/**
 * `table[key]` when `key` is one of the table's own keys, else undefined. A key from a request (a header,
 * an envelope field, a query's option) may name what every object inherits (`constructor`, `__proto__`,
 * `toString`), which a plain `table[key]` would answer with Object.prototype's member.
 */
export function ownValue<K extends string, V>(table: Readonly<Record<K, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key as K] : undefined;
}
