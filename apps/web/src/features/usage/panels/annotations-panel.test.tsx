import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import AnnotationsPanel, { localInputValue } from './annotations-panel';
import { panelProps } from '../test-panel-props';
import type { Annotations } from '../usage-api';

const calls: { path: string; init: RequestInit | undefined }[] = [];
let fail: Error | undefined;
vi.mock('../../../auth/use-api', () => ({
  ApiError: class extends Error {},
  useApi: () => (path: string, init?: RequestInit) => {
    calls.push({ path, init });
    return fail ? Promise.reject(fail) : Promise.resolve({});
  },
}));

const data: Annotations = {
  range: '24h',
  from: '2026-11-25T10:00:00.000Z',
  to: '2026-11-26T10:00:00.000Z',
  annotations: [
    {
      id: '5f0c6b1e-8a3b-4c1d-9e2f-0a1b2c3d4e5f',
      time: '2026-11-26T08:00:00.000Z',
      note: '<img src=x onerror=alert(1)> Release 2.4',
      author: 'pseudonym',
      mine: true,
      createdAt: '2026-11-26T08:01:00.000Z',
    },
    {
      id: '6f0c6b1e-8a3b-4c1d-9e2f-0a1b2c3d4e5f',
      time: '2026-11-26T09:00:00.000Z',
      note: 'Incident',
      author: null,
      mine: false,
      createdAt: '2026-11-26T09:01:00.000Z',
    },
  ],
};

describe('AnnotationsPanel', () => {
  it('lists the notes as text, and posts a new one at the chosen local time, then reloads', async () => {
    const reload = vi.fn();
    render(<AnnotationsPanel {...panelProps({}, { annotations: { status: 'ready', data, reload } })} />);
    const items = within(screen.getByTestId('annotations-list')).getAllByRole('listitem');
    expect(items[0]?.textContent).toContain('<img src=x onerror=alert(1)> Release 2.4 (by you)');
    expect(items[0]?.querySelector('img')).toBeNull();
    expect(items[1]?.textContent).toContain('(author erased)');

    const local = localInputValue(Date.parse('2026-11-26T09:30:00Z'));
    fireEvent.change(screen.getByLabelText(/^Time/), { target: { value: local } });
    fireEvent.change(screen.getByLabelText('Note'), { target: { value: 'Release 2.5' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add annotation' }));
    await waitFor(() => expect(reload).toHaveBeenCalledOnce());
    expect(calls.at(-1)?.path).toBe('/api/usage/annotations');
    expect(calls.at(-1)?.init?.method).toBe('POST');
    expect(JSON.parse(calls.at(-1)?.init?.body as string)).toEqual({
      time: '2026-11-26T09:30:00.000Z',
      note: 'Release 2.5',
    });
    expect(screen.getByLabelText<HTMLInputElement>('Note').value).toBe('');
    expect(screen.getByLabelText<HTMLInputElement>('Note').maxLength).toBe(200);
  });

  it('deletes one by its id, and says why when the API refuses', async () => {
    const reload = vi.fn();
    render(<AnnotationsPanel {...panelProps({}, { annotations: { status: 'ready', data, reload } })} />);
    fireEvent.click(screen.getByRole('button', { name: 'Delete the annotation “Incident”' }));
    await waitFor(() => expect(reload).toHaveBeenCalledOnce());
    expect(calls.at(-1)).toMatchObject({
      path: '/api/usage/annotations/6f0c6b1e-8a3b-4c1d-9e2f-0a1b2c3d4e5f',
      init: { method: 'DELETE' },
    });
    fail = new Error('note must be at most 200 characters.');
    fireEvent.change(screen.getByLabelText('Note'), { target: { value: 'x' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add annotation' }));
    expect((await screen.findByRole('alert')).textContent).toBe('note must be at most 200 characters.');
    expect(reload).toHaveBeenCalledOnce();
    fail = undefined;
  });
});
