import { describe, expect, it } from 'vitest'
import { changedPart } from './ConsoleAudit'

describe('audit entries', () => {
  it('show only what changed when both sides are objects', () => {
    const before = JSON.stringify({ checkFenPerThousand: 300, pptFen: 1990, paperTiers: [{ words: 5000, fen: 2990 }] })
    const after = JSON.stringify({ checkFenPerThousand: 500, pptFen: 1990, paperTiers: [{ words: 5000, fen: 2990 }] })
    expect(changedPart(after, before)).toBe('{ "checkFenPerThousand": 500 }')
    expect(changedPart(before, after)).toBe('{ "checkFenPerThousand": 300 }')
  })

  it('show the whole value otherwise', () => {
    expect(changedPart('{"disabled":true}', '')).toBe('{ "disabled": true }')
    expect(changedPart('"某某大学"', '"文鉴"')).toBe('某某大学')
    expect(changedPart('', '{"a":1}')).toBe('')
  })
})
