import { Alert, Button, Card, Col, Row, Space, Tag } from 'antd'
import { diffArrays } from 'diff'
import { rewriteChoose } from './api'
import type { ComparedLine } from './types'
import { percent, probability, words } from './figures'
import { useSubmit } from '../../utils/useSubmit'

/** The rewrite with what it removed and added marked word by word. */
function Diff({ before, after, side }: { before: string; after: string; side: 'before' | 'after' }) {
  const parts = diffArrays(words(before), words(after))
  return (
    <>
      {parts.map((p, i) => {
        const text = p.value.join('')
        if (p.added) return side === 'after' ? <ins key={i} className="diff-added">{text}</ins> : null
        if (p.removed) return side === 'before' ? <del key={i} className="diff-removed">{text}</del> : null
        return <span key={i}>{text}</span>
      })}
    </>
  )
}

function Figures({ line }: { line: ComparedLine }) {
  const r = line.rewrite
  if (!r) return null
  return (
    <Space size={[12, 4]} wrap className="rewrite-figures">
      <span>
        复制比 <span data-testid="line-similarity-before">{percent(r.similarity_before)}</span> → <b data-testid="line-similarity-after">{percent(r.similarity_after)}</b>
      </span>
      <span>
        AI 概率 {probability(r.ai_before)} → <b>{probability(r.ai_after)}</b>
      </span>
      <span>语义相似度 {r.meaning == null ? '—' : r.meaning.toFixed(2)}</span>
      <span className="muted">尝试 {r.attempts} 次 · {r.model}</span>
    </Space>
  )
}

/** One paragraph of a finished rewrite: figures, verdict, the word diff, the 采用 / 保留原文 choice, and (with `onRerun`) running it again. */
export default function LineCard({ id, line, onChanged, onRerun }: { id: number; line: ComparedLine; onChanged: () => void; onRerun?: (index: number) => void }) {
  const r = line.rewrite
  const [saving, choose] = useSubmit(async (accepted: boolean | null) => {
    await rewriteChoose(id, line.index, accepted)
    onChanged()
  })
  if (!r) {
    if (line.heading) return <h3 className="rewrite-heading">{line.text}</h3>
    return line.text.trim() ? <p className="rewrite-unchanged">{line.text}</p> : null
  }
  return (
    <Card
      size="small"
      className={`rewrite-line ${line.usesRewrite ? 'uses-rewrite' : 'keeps-original'}`}
      data-testid="rewrite-line"
      data-uses-rewrite={line.usesRewrite}
      title={
        <Space>
          <span>第 {line.index + 1} 段</span>
          {line.usesRewrite ? <Tag color="green">采用改写</Tag> : <Tag>保留原文</Tag>}
          {line.choice !== null && <Tag color="blue">您的选择</Tag>}
        </Space>
      }
      extra={
        <Space size={4}>
          {r.rewritten &&
            (line.usesRewrite ? (
              <Button size="small" loading={saving} onClick={() => void choose(false)}>保留原文</Button>
            ) : (
              <Button size="small" type="primary" loading={saving} onClick={() => void choose(true)}>采用改写</Button>
            ))}
          {r.rewritten && line.choice !== null && (
            <Button size="small" type="link" loading={saving} onClick={() => void choose(null)}>按实测结果</Button>
          )}
          {onRerun && (
            <Button size="small" type="link" onClick={() => onRerun(line.index)} data-testid="rewrite-line-again">重新改写此段</Button>
          )}
        </Space>
      }
    >
      <Figures line={line} />
      {r.reason && <Alert className="mt" type={r.rewritten ? 'warning' : 'error'} showIcon title={r.reason} />}
      <Row gutter={16} className="mt">
        <Col xs={24} md={12}>
          <div className="muted">原文</div>
          <div className="rewrite-text">{r.rewritten ? <Diff before={r.original} after={r.rewritten} side="before" /> : r.original}</div>
        </Col>
        <Col xs={24} md={12}>
          <div className="muted">改写</div>
          <div className="rewrite-text" data-testid="rewrite-after">{r.rewritten ? <Diff before={r.original} after={r.rewritten} side="after" /> : '（无）'}</div>
        </Col>
      </Row>
    </Card>
  )
}
