import { describe, expect, it } from 'vitest';
import { readRoles } from './roles.js';

describe('readRoles', () => {
  it('reads an array under a top-level claim, keeping only strings', () => {
    expect(readRoles({ roles: ['a', 'b', 3, null] }, 'roles')).toEqual(['a', 'b']);
  });

  it('follows a dotted path into nested claims (Keycloak)', () => {
    const claims = { realm_access: { roles: ['admin', 'member'] }, roles: ['ignored'] };
    expect(readRoles(claims, 'realm_access.roles')).toEqual(['admin', 'member']);
  });

  it('takes a claim whose name holds dots before a path (Auth0 namespaced claims)', () => {
    expect(readRoles({ 'https://example.com/roles': ['x'] }, 'https://example.com/roles')).toEqual(['x']);
  });

  it('counts a single string as one role, at the top or along a path', () => {
    expect(readRoles({ role: 'admin' }, 'role')).toEqual(['admin']);
    expect(readRoles({ realm_access: { roles: 'admin' } }, 'realm_access.roles')).toEqual(['admin']);
    expect(readRoles({ role: '' }, 'role')).toEqual([]);
  });

  it('finds no roles when the claim is missing or of another shape', () => {
    expect(readRoles({}, 'roles')).toEqual([]);
    expect(readRoles({ roles: { admin: true } }, 'roles')).toEqual([]);
    expect(readRoles({ realm_access: ['roles'] }, 'realm_access.roles')).toEqual([]);
    expect(readRoles({ realm_access: null }, 'realm_access.roles')).toEqual([]);
    expect(readRoles({ realm_access: { roles: ['admin'] } }, 'realm_access')).toEqual([]);
  });
});
