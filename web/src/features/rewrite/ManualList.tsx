import { Button, Card, Space, Tag } from 'antd'
import type { ComparedLine } from './types'
import { DOUBT_COLOR, doubtsOf } from './figures'

/** Scrolls to a paragraph's card (LineCard gives each the id `line-{index}`). */
function scrollToLine(index: number) {
  document.getElementById(`line-${index}`)?.scrollIntoView?.({ behavior: 'smooth', block: 'start' })
}

/**
 * 需要您手动修改的段落: every rewritten paragraph whose text the paper still keeps as the original, with why,
 * and a link to its card. Nothing at all when every rewrite is in use. `keeps` says where the original text stays
 * (the Word file, the copied result).
 */
export default function ManualList({ lines, keeps }: { lines: ComparedLine[]; keeps: string }) {
  const kept = lines.filter((l) => l.rewrite && !l.usesRewrite)
  if (kept.length === 0) return null
  return (
    <Card
      size="small"
      className="mb"
      title={`需要您手动修改的段落（${kept.length} 段）`}
      data-testid="manual-list"
      style={{ borderColor: '#ffa39e' }}
    >
      <div className="muted" style={{ marginTop: 0, marginBottom: 8 }}>
        这些段落的改写未被采用：未通过核对的段落已按字数退还费用，{keeps}仍是原文，请参照改写稿自行修改。
      </div>
      {kept.map((line) => {
        const r = line.rewrite
        const doubts = doubtsOf(r)
        return (
          <div key={line.index} data-testid="manual-item" data-index={line.index} style={{ padding: '6px 0', borderTop: '1px solid #f0f0f0' }}>
            <Space size={[8, 4]} wrap>
              <Button type="link" size="small" style={{ padding: 0 }} onClick={() => scrollToLine(line.index)} data-testid="manual-link">
                第 {line.index + 1} 段
              </Button>
              {doubts.length > 0 ? (
                doubts.map((d, i) => (
                  <Tag key={i} color={DOUBT_COLOR[d.kind] ?? 'red'}>{d.label}</Tag>
                ))
              ) : r?.accepted ? (
                <span className="muted" style={{ marginTop: 0 }}>您选择了保留原文</span>
              ) : (
                <span className="muted" style={{ marginTop: 0 }}>{(r?.reason ?? '改写未达标').replace(/^保留原文：/, '')}</span>
              )}
              {r && !r.accepted && <Tag>已退费</Tag>}
            </Space>
          </div>
        )
      })}
    </Card>
  )
}
