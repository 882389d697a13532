import { describe, expect, it } from 'vitest'
import { splitEvents } from './api'

describe('splitEvents', () => {
  it('returns complete data payloads and keeps a partial event for the next chunk', () => {
    const { events, rest } = splitEvents('data: {"type":"delta","text":"改"}\n\ndata: {"type":"delta","text":"写"}\r\n\r\ndata: {"ty')
    expect(events).toEqual(['{"type":"delta","text":"改"}', '{"type":"delta","text":"写"}'])
    expect(rest).toBe('data: {"ty')
  })

  it('ignores keep-alive comments', () => {
    expect(splitEvents(':\n\n').events).toEqual([])
  })
})

describe('messagePriceFen', () => {
  it('charges every started 1,000 counted characters', async () => {
    const { messagePriceFen } = await import('./ChatPanel')
    expect(messagePriceFen('改写 这一段', 200)).toBe(200)
    expect(messagePriceFen('字'.repeat(1000), 200)).toBe(200)
    expect(messagePriceFen('字'.repeat(1001), 200)).toBe(400)
    expect(messagePriceFen('   ', 200)).toBe(0)
  })
})
