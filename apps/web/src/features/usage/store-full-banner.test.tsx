import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { formatTime } from './format';
import { StoreFullBanner } from './store-full-banner';

describe('StoreFullBanner', () => {
  it('tells admins what is refused, since when, and what to do', () => {
    const since = '2026-11-25T18:42:00.000Z';
    render(
      <StoreFullBanner storeFull={{ since, usedBytes: 5 * 1024 ** 3 + 1024, maxBytes: 5 * 1024 ** 3 }} />,
    );
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain('New telemetry is not being stored.');
    expect(alert.textContent).toContain(`(5.00 GiB of 5.00 GiB) on ${formatTime(since)}`);
    expect(alert.textContent).toContain('refused every sender');
    expect(alert.textContent).toContain('TELEMETRY_RETENTION_DAYS');
    expect(alert.textContent).toContain('TELEMETRY_MAX_STORE_MB');
  });

  it('says nothing while the store takes telemetry', () => {
    const { container } = render(<StoreFullBanner storeFull={null} />);
    expect(container.textContent).toBe('');
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
