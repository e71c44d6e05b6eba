import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { SegmentFilter, segmentOf, segmentQuery } from './segment-filter';

describe('segment filter', () => {
  it('reads the segment from the address, leaving out what the API would refuse, and writes it for the API', () => {
    const segment = segmentOf(
      new URLSearchParams('auth=signed-in&role=+admin+&browser=Netscape&device=mobile&other=1'),
    );
    expect(segment).toEqual({ auth: 'signed-in', role: 'admin', device: 'mobile' });
    expect(segmentQuery(segment)).toBe('&auth=signed-in&role=admin&device=mobile');
    expect(segmentQuery({ browser: 'Samsung Internet' })).toBe('&browser=Samsung%20Internet');
    expect(segmentQuery({})).toBe('');
  });

  it('applies a choice at once and a role when the field is left, keeping the rest', () => {
    const onChange = vi.fn();
    const { rerender } = render(<SegmentFilter segment={{ device: 'mobile' }} onChange={onChange} />);
    fireEvent.change(screen.getByLabelText('Browser'), { target: { value: 'Firefox' } });
    expect(onChange).toHaveBeenLastCalledWith({ browser: 'Firefox', device: 'mobile' });
    const role = screen.getByLabelText('Role');
    fireEvent.change(role, { target: { value: ' admin ' } });
    expect(onChange).toHaveBeenCalledTimes(1);
    fireEvent.blur(role);
    expect(onChange).toHaveBeenLastCalledWith({ role: 'admin', device: 'mobile' });
    fireEvent.change(screen.getByLabelText('Device'), { target: { value: '' } });
    expect(onChange).toHaveBeenLastCalledWith({});
    rerender(<SegmentFilter segment={{ auth: 'anonymous' }} onChange={onChange} />);
    fireEvent.click(screen.getByRole('button', { name: 'Everyone' }));
    expect(onChange).toHaveBeenLastCalledWith({});
  });

  it('takes a system and a referring site (a host, or direct) from the address, and clears the site alone', () => {
    const segment = segmentOf(new URLSearchParams('os=iOS&referrer=news.example'));
    expect(segment).toEqual({ os: 'iOS', referrer: 'news.example' });
    expect(segmentQuery(segment)).toBe('&os=iOS&referrer=news.example');
    expect(segmentOf(new URLSearchParams('referrer=(direct)&os=BeOS'))).toEqual({ referrer: '(direct)' });
    // A URL is no referring site: only a host is ever asked for.
    expect(segmentOf(new URLSearchParams('referrer=https://news.example/a?token=t'))).toEqual({});
    const onChange = vi.fn();
    render(<SegmentFilter segment={segment} onChange={onChange} />);
    expect(screen.getByTestId('segment-referrer').textContent).toMatch(/^From news.example Clear/);
    fireEvent.click(within(screen.getByTestId('segment-referrer')).getByRole('button'));
    expect(onChange).toHaveBeenLastCalledWith({ os: 'iOS' });
  });

  it('offers no reset when the dashboard is about everyone', () => {
    render(<SegmentFilter segment={{}} onChange={vi.fn()} />);
    expect(screen.queryByRole('button', { name: 'Everyone' })).toBeNull();
    // The filter itself is there, every control on "any".
    const filter = within(screen.getByRole('group', { name: 'Segment' }));
    const values = ['Users', 'Role', 'Browser', 'Device', 'System'].map(
      (label) => filter.getByLabelText<HTMLInputElement | HTMLSelectElement>(label).value,
    );
    expect(values).toEqual(['', '', '', '', '']);
  });
});
