// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { formatTileChange } from './format';

describe('formatTileChange', () => {
  it('signs the change as a percentage, and says when there was nothing before', () => {
    expect(formatTileChange({ value: 45, previous: 40 })).toBe('+12.5 %');
    expect(formatTileChange({ value: 97, previous: 100 })).toBe('\u22123 %');
    expect(formatTileChange({ value: 40, previous: 40 })).toBe('0 %');
    expect(formatTileChange({ value: 3, previous: 0 })).toBe('new');
    expect(formatTileChange({ value: 0, previous: 0 })).toBe('—');
  });
});
