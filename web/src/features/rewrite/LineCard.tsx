import { Alert, Button, Card, Col, Popconfirm, Row, Space, Tag, Tooltip } from 'antd'
import { rewriteChoose } from './api'
import type { ComparedLine, Doubt, ParagraphRewrite } from './types'
import { DOUBT_COLOR, doubtsOf, percent, probability } from './figures'
import { useSubmit } from '../../utils/useSubmit'
import TextDiff from '../../components/TextDiff'

const Diff = TextDiff

/** The goal faults of `reason` ("保留原文：…"), without the doubts shown on their own. */
function otherFaults(r: ParagraphRewrite): string[] {
  let rest = (r.reason ?? '').replace(/^保留原文：/, '')
  for (const d of doubtsOf(r)) rest = rest.replace(`${d.label}：${d.detail}`, '')
  return rest.split('；').map((s) => s.trim()).filter(Boolean)
}

function Figures({ line }: { line: ComparedLine }) {
  const r = line.rewrite
  if (!r) return null
  const reading = r.reading
  return (
    <Space size={[12, 4]} wrap className="rewrite-figures" data-testid="line-figures">
      <span>
        复制比 <span data-testid="line-similarity-before">{percent(r.similarity_before)}</span> → <b data-testid="line-similarity-after">{percent(r.similarity_after)}</b>
      </span>
      <span>
        AI 概率 {probability(r.ai_before)} → <b>{probability(r.ai_after)}</b>
      </span>
      <span>语义相似度 {r.meaning == null ? '—' : r.meaning.toFixed(2)}</span>
      {reading && reading.key_terms > 0 && (
        <Tooltip title={`原文的关键词（按 TF-IDF 选出）在改写中原样保留的个数；英文、数字、引用、公式与保留术语保留 ${reading.hard_items_kept}/${reading.hard_items}`}>
          <span data-testid="line-terms">术语保留 {reading.key_terms_kept}/{reading.key_terms}</span>
        </Tooltip>
      )}
      {reading && reading.sentences > 0 && (
        <Tooltip title="原文的句子在改写中找到意思相近的对应句的个数；找不到的句子可能被漏掉或改了意思">
          <span data-testid="line-sentences">句子对应 {reading.sentences_covered}/{reading.sentences}</span>
        </Tooltip>
      )}
      {reading && (
        <Tooltip title="改写中与原文连续 10 字以上完全相同的文字所占比例；越高越像原文照抄">
          <span data-testid="line-copied">与原文连续相同 {(reading.copied * 100).toFixed(0)}%</span>
        </Tooltip>
      )}
      {reading && reading.surprisal_before != null && reading.surprisal_after != null && (
        <Tooltip title="语言模型读每个词元的平均意外程度（困惑度，nats）：数值越低读来越自然；改写后明显升高，说明语句不如原文通顺">
          <span data-testid="line-fluency">
            通顺度 {reading.surprisal_before.toFixed(2)} → <b>{reading.surprisal_after.toFixed(2)}</b>
          </span>
        </Tooltip>
      )}
      <Tooltip title={`技术说明：由 ${r.model} 写出`}>
        <span className="muted">尝试 {r.attempts} 次</span>
      </Tooltip>
    </Space>
  )
}

/** Why the review does not trust the rewrite: each doubt as a tag with the words in question beneath. */
function Doubts({ doubts }: { doubts: Doubt[] }) {
  return (
    <div data-testid="line-doubts">
      {doubts.map((d, i) => (
        <div key={i} className="mt-s" data-testid="line-doubt" data-kind={d.kind}>
          <Tag color={DOUBT_COLOR[d.kind] ?? 'red'}>{d.label}</Tag>
          <div style={{ marginTop: 4, lineHeight: 1.7, wordBreak: 'break-word' }}>{d.detail}</div>
        </div>
      ))}
    </div>
  )
}

/** The verdict: for a doubted rewrite the paper keeps, that it was refunded and is the student's to rewrite. */
function Verdict({ line }: { line: ComparedLine }) {
  const r = line.rewrite
  if (!r) return null
  const doubts = doubtsOf(r)
  if (doubts.length === 0) {
    if (!r.reason) return null
    return <Alert className="mt" type={r.rewritten ? 'warning' : 'error'} showIcon title={r.reason} description={r.accepted ? undefined : '本段费用已退还。'} data-testid="line-verdict" />
  }
  const faults = otherFaults(r)
  const title = line.usesRewrite
    ? '您已采用这段改写，但核对发现下列问题：请逐句对照原文修改后再使用。'
    : `这段改写未通过核对，论文仍保留原文${r.accepted ? '' : '，本段费用已退还'}。请您手动修改本段：改写稿只作参考，不要直接采用。`
  return (
    <Alert
      className="mt"
      type={line.usesRewrite ? 'warning' : 'error'}
      showIcon
      data-testid="line-verdict"
      title={title}
      description={
        <>
          <Doubts doubts={doubts} />
          {faults.length > 0 && <div className="mt-s">另外：{faults.join('；')}</div>}
        </>
      }
    />
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
  const doubts = doubtsOf(r)
  return (
    <Card
      size="small"
      className={`rewrite-line ${line.usesRewrite ? 'uses-rewrite' : 'keeps-original'}`}
      data-testid="rewrite-line"
      id={`line-${line.index}`}
      style={{ scrollMarginTop: 140, ...(doubts.length > 0 && !line.usesRewrite ? { borderLeftColor: '#ff4d4f' } : {}) }}
      data-uses-rewrite={line.usesRewrite}
      data-doubted={doubts.length > 0}
      title={
        <Space size={[8, 4]} wrap>
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
              doubts.length > 0 ? (
                <Popconfirm
                  title={`改写被判定为“${doubts.map((d) => d.label).join('、')}”，确定仍要采用？`}
                  description="采用后论文使用这段改写，请先逐句核对。"
                  okText="仍要采用"
                  cancelText="取消"
                  onConfirm={() => void choose(true)}
                >
                  <Button size="small" loading={saving} danger data-testid="rewrite-adopt">采用改写</Button>
                </Popconfirm>
              ) : (
                <Button size="small" type="primary" loading={saving} onClick={() => void choose(true)} data-testid="rewrite-adopt">采用改写</Button>
              )
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
      <Verdict line={line} />
      <Row gutter={16} className="mt">
        <Col xs={24} md={12}>
          <div className="muted">原文</div>
          <div className="rewrite-text">{r.rewritten ? <Diff before={r.original} after={r.rewritten} side="before" /> : r.original}</div>
        </Col>
        <Col xs={24} md={12}>
          <div className="muted">{doubts.length > 0 && !line.usesRewrite ? '改写稿（未通过核对，仅供参考）' : '改写'}</div>
          <div className="rewrite-text" data-testid="rewrite-after">{r.rewritten ? <Diff before={r.original} after={r.rewritten} side="after" /> : '（无）'}</div>
        </Col>
      </Row>
    </Card>
  )
}
