// The link to the server as the page tracks it: when it was lost and how many times it retried.

import { describe, expect, it } from 'vitest';
import { FIRST_LINK, type Link, isOffline, nextLink } from '../store/run';
import type { ConnectionState } from '../api/socket';

const follow = (states: [ConnectionState, number][], link: Link = FIRST_LINK): Link =>
  states.reduce((l, [state, now]) => nextLink(l, state, now), link);

describe('nextLink', () => {
  it('is connecting, not reconnecting, until it first opens', () => {
    const link = follow([
      ['connecting', 1],
      ['closed', 2],
      ['connecting', 3],
    ]);
    expect(link).toEqual({ connection: 'connecting', lostAt: 2, retries: 1, opened: false });
    expect(isOffline(link)).toBe(true);
  });

  it('remembers when it was lost and counts the attempts since', () => {
    const open = follow([
      ['connecting', 1],
      ['open', 2],
    ]);
    expect(isOffline(open)).toBe(false);
    const lost = follow(
      [
        ['closed', 10],
        ['connecting', 11],
        ['closed', 11.1],
        ['connecting', 12],
        ['closed', 12.1],
      ],
      open,
    );
    expect(lost).toEqual({ connection: 'closed', lostAt: 10, retries: 2, opened: true });
    expect(
      follow(
        [
          ['connecting', 14],
          ['open', 14.2],
        ],
        lost,
      ),
    ).toEqual({ connection: 'open', lostAt: null, retries: 0, opened: true });
  });
});
