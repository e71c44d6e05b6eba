import { describe, expect, it } from 'vitest';
import { mayAccess, roleFor } from './access.js';

describe('mayAccess', () => {
  it('lets anyone in to public, signed-in users to signed-in, and only holders of the admin role to admin', () => {
    const member = { roles: ['member'] };
    const admin = { roles: ['member', 'admin'] };
    expect([null, member, admin].map((caller) => mayAccess('public', caller))).toEqual([true, true, true]);
    expect([null, member, admin].map((caller) => mayAccess('signed-in', caller))).toEqual([
      false,
      true,
      true,
    ]);
    expect([null, member, admin].map((caller) => mayAccess('admin', caller))).toEqual([false, false, true]);
    expect(roleFor('admin')).toBe('admin');
    expect(roleFor('signed-in')).toBeUndefined();
  });
});
