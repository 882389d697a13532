import { useState } from 'react'
import { Alert, App, Button, Card, Collapse, Dropdown, Empty, Form, Input, Modal, Progress, Result, Space, Spin, Tag, Tooltip } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate, useParams } from 'react-router'
import { paperAsFile, paperContent, paperDeleteSection, paperDownload, paperLoad, paperReloadSection, paperUpdateSection, type CoverForm } from './api'
import { checkInit } from '../check/api'
import { aigcInit } from '../aigc/api'
import { rewriteInit } from '../rewrite/api'
import { STATE_LABEL, isBusy, type PaperContent, type SectionView } from './types'
import { DISCLAIMER, WriterNotice } from './PaperStartPage'
import { useSubmit } from '../../utils/useSubmit'
import { ApiError } from '../../api/client'
import { toastError, toastSuccess } from '../../utils/feedback'
import { formatFen } from '../../utils/format'

const INSTRUCTIONS = ['更学术', '扩写到800字', '压缩到300字', '加一个表格', '语言更通顺']

/** One section: read, edit in place, empty, write again with an instruction, or go back to an earlier version. */
function SectionCard({ paperId, section, reloading, editable, onChanged }: { paperId: number; section: SectionView; reloading: boolean; editable: boolean; onChanged: () => void }) {
  const { modal } = App.useApp()
  const [editing, setEditing] = useState<string | null>(null)
  const [instruction, setInstruction] = useState('')
  const [asking, setAsking] = useState(false)
  const [saving, save] = useSubmit(async (change: { text: string } | { version: number }) => {
    try {
      await paperUpdateSection(paperId, section.index, change)
    } catch (e) {
      // Saved elsewhere meanwhile: show the paper as it now is, keeping this edit open to copy from.
      if (e instanceof ApiError && e.code === 'paper_changed') onChanged()
      throw e
    }
    setEditing(null)
    onChanged()
  })
  const [reloadBusy, reload] = useSubmit(async (what: string) => {
    await paperReloadSection(paperId, section.index, what)
    setAsking(false)
    toastSuccess('已开始重写本节，完成后自动替换（原文保留为历史版本）')
    onChanged()
  })
  const heading = section.heading
  return (
    <div className="paper-section" data-testid="paper-section">
      <div className={`paper-heading level-${section.level}`}>
        {heading}
        {section.weak && <Tag color="orange" style={{ marginLeft: 8 }}>偏短：模型未能写足字数</Tag>}
        {section.placedCitations > 0 && (
          <Tooltip title="模型用到了这些文献却没有标注，系统在与文献用词对应最多的句子后补注了引用。请核对引用位置是否恰当。">
            <Tag color="blue" style={{ marginLeft: 8 }} data-testid="placed-citations">{section.placedCitations} 处引用由系统补注</Tag>
          </Tooltip>
        )}
        {reloading && <Tag color="processing" style={{ marginLeft: 8 }}>重写中</Tag>}
      </div>
      {editing !== null ? (
        <>
          <Input.TextArea value={editing} onChange={(e) => setEditing(e.target.value)} autoSize={{ minRows: 6, maxRows: 24 }} maxLength={20000} showCount />
          <Space className="mt-s">
            <Button type="primary" loading={saving} onClick={() => void save({ text: editing })}>保存</Button>
            <Button onClick={() => setEditing(null)}>取消</Button>
          </Space>
        </>
      ) : section.text ? (
        section.text.split('\n').map((p, i) => <p key={i} className="paper-paragraph">{p}</p>)
      ) : (
        <p className="muted">（本节内容已删除，可从历史版本恢复）</p>
      )}
      {editable && editing === null && (
        <Space size={4} wrap className="paper-actions">
          <span className="muted">{section.chars} 字</span>
          <Button size="small" type="link" onClick={() => setEditing(section.text)} disabled={reloading}>编辑</Button>
          <Button size="small" type="link" onClick={() => setAsking(true)} disabled={reloading}>重写</Button>
          {section.versions > 0 && (
            <Dropdown
              menu={{
                items: Array.from({ length: section.versions }, (_, v) => ({ key: String(v), label: `恢复第 ${v + 1} 个历史版本` })).reverse(),
                onClick: ({ key }) => void save({ version: Number(key) }),
              }}
            >
              <Button size="small" type="link">历史版本（{section.versions}）</Button>
            </Dropdown>
          )}
          {section.text && (
            <Button
              size="small"
              type="link"
              danger
              onClick={() =>
                modal.confirm({
                  title: `删除“${heading}”的内容？`,
                  content: '内容会保留为历史版本，可以恢复。',
                  onOk: async () => {
                    await paperDeleteSection(paperId, section.index)
                    onChanged()
                  },
                })
              }
            >
              删除
            </Button>
          )}
        </Space>
      )}
      <Modal title={`重写“${heading}”`} open={asking} onCancel={() => setAsking(false)} okText="开始重写" confirmLoading={reloadBusy} onOk={() => void reload(instruction)}>
        <p className="muted">可选：写下修改要求，留空则按大纲重新写。原文会保留为历史版本。</p>
        <Space wrap className="mb-s">
          {INSTRUCTIONS.map((i) => <Tag.CheckableTag key={i} checked={instruction === i} onChange={() => setInstruction(i)}>{i}</Tag.CheckableTag>)}
        </Space>
        <Input value={instruction} onChange={(e) => setInstruction(e.target.value)} maxLength={200} placeholder="例如：更学术；扩写到800字；加一个表格" />
      </Modal>
    </div>
  )
}

/** The finished paper handed, as its Word file, to the similarity check, the AIGC detection or 降AIGC: each opens at its price. */
function NextStep({ id, title }: { id: number; title: string }) {
  const navigate = useNavigate()
  const [busy, setBusy] = useState<string | null>(null)
  const [, go] = useSubmit(async (where: 'check' | 'aigc' | 'rewrite') => {
    setBusy(where)
    try {
      const file = await paperAsFile(id, title)
      if (where === 'check') navigate(`/paper/submit/${(await checkInit({ file, title })).id}?excludeBibliography=1`)
      else if (where === 'aigc') navigate(`/aigccheck/check?draft=${(await aigcInit({ file, title })).id}`)
      else navigate(`/aigcdown/machine?draft=${(await rewriteInit({ file, title })).id}`)
    } finally {
      setBusy(null)
    }
  })
  return (
    <>
      <Button size="small" loading={busy === 'check'} disabled={busy !== null} onClick={() => void go('check')} data-testid="paper-next-check">论文查重</Button>
      <Button size="small" loading={busy === 'aigc'} disabled={busy !== null} onClick={() => void go('aigc')} data-testid="paper-next-aigc">AIGC检测</Button>
      <Button size="small" loading={busy === 'rewrite'} disabled={busy !== null} onClick={() => void go('rewrite')} data-testid="paper-next-rewrite">降AIGC</Button>
    </>
  )
}

function DownloadButton({ content, major }: { content: PaperContent; major: string }) {
  const [open, setOpen] = useState(false)
  const [form] = Form.useForm<CoverForm>()
  const [busy, download] = useSubmit(async () => {
    await paperDownload(content.id, content.title, form.getFieldsValue()).catch((e: Error) => toastError(e.message))
    setOpen(false)
  })
  return (
    <>
      <Button type="primary" onClick={() => setOpen(true)} data-testid="paper-download">下载 Word</Button>
      <Modal title="封面信息（可留空，下载后手填）" open={open} onCancel={() => setOpen(false)} okText="下载 .docx" confirmLoading={busy} onOk={() => void download(undefined)}>
        <Form form={form} layout="vertical" initialValues={{ major }}>
          <Form.Item label="学校" name="school"><Input maxLength={60} /></Form.Item>
          <Form.Item label="专业" name="major"><Input maxLength={60} /></Form.Item>
          <Space>
            <Form.Item label="姓名" name="name"><Input maxLength={30} /></Form.Item>
            <Form.Item label="学号" name="studentNumber"><Input maxLength={30} /></Form.Item>
          </Space>
          <Space>
            <Form.Item label="指导教师" name="supervisor"><Input maxLength={30} /></Form.Item>
            <Form.Item label="日期" name="date"><Input maxLength={30} placeholder="2026年5月" /></Form.Item>
          </Space>
          <Form.Item label="致谢（可选）" name="acknowledgements"><Input.TextArea maxLength={2000} autoSize={{ minRows: 2, maxRows: 6 }} /></Form.Item>
        </Form>
      </Modal>
    </>
  )
}

/** The model's citation markers while a section streams in (numbered once it is finished). */
const withoutMarkers = (text: string) => text.replace(/[[［]\s*ref[^\]］]*[\]］]?/gi, '')

/** "第2章" → "2"; "2.1" stays. */
const key = (number: string) => number.replace(/^第(\d+)章$/, '$1')

/** The chapter and section headings (without text of their own) that open before section `i`. */
function parentsBefore(paper: PaperContent, i: number) {
  const own = (s: SectionView) => key(s.heading.split(' ')[0])
  const ancestors = (n: string) => n.split('.').slice(0, -1).map((_, j, parts) => parts.slice(0, j + 1).join('.'))
  const before = new Set(paper.sections.slice(0, i).flatMap((s) => ancestors(own(s))))
  const mine = ancestors(own(paper.sections[i]))
  return paper.headings.filter((h) => mine.includes(key(h.number)) && !before.has(key(h.number)))
}

/** /aipaper/content/:id and /paperwirte/wirte/:id — the paper as it is written, section by section, then edited and downloaded. */
export default function PaperContentPage() {
  const id = Number(useParams().id)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const detail = useQuery({
    queryKey: ['paper', id],
    queryFn: () => paperLoad(id),
    refetchInterval: (q) => (q.state.data && isBusy(q.state.data.record.state) ? 1500 : false),
  })
  const state = detail.data?.record.state
  const content = useQuery({
    // Fetched again whenever a section is finished or the state changes, so the finished page
    // never shows what was fetched while writing.
    queryKey: ['paper-content', id, detail.data?.record.sectionsDone, state],
    queryFn: () => paperContent(id),
    enabled: state === 'writing' || state === 'done' || state === 'failed' || state === 'cancelled',
    refetchInterval: (q) => (state === 'writing' || q.state.data?.reloads.some((r) => r.status === 'queued' || r.status === 'running') ? 2000 : false),
  })
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ['paper-content', id] })
    void queryClient.invalidateQueries({ queryKey: ['paper', id] })
  }
  if (detail.isLoading) return <div className="page-card"><Card><Spin /></Card></div>
  if (detail.error || !detail.data)
    return (
      <div className="page-card">
        <Card><Result status="warning" title="找不到这篇论文" subTitle={detail.error?.message} extra={<Button onClick={() => navigate('/aipaper/list')}>返回我的论文</Button>} /></Card>
      </div>
    )
  const { record } = detail.data
  if (record.state.startsWith('outline')) {
    return (
      <div className="page-card">
        <Card><Result status="info" title="大纲尚未确认" extra={<Button type="primary" onClick={() => navigate(`/aipaper/outline/${id}`)}>去确认大纲</Button>} /></Card>
      </div>
    )
  }
  const paper = content.data
  const writing = paper?.writing ?? detail.data.writing
  const reloadingIndex = new Set((paper?.reloads ?? []).filter((r) => r.status === 'queued' || r.status === 'running').map((r) => r.index))
  const failedReload = paper?.reloads.find((r) => r.status === 'failed')
  return (
    <div className="page-card">
      <Card
        title={<span>{record.title}</span>}
        extra={
          <Space wrap>
            <Tag color={STATE_LABEL[record.state].color}>{STATE_LABEL[record.state].label}</Tag>
            {record.state === 'done' && paper && <DownloadButton content={paper} major={record.field} />}
            <Button onClick={() => navigate('/aipaper/list')}>我的论文</Button>
          </Space>
        }
      >
        <WriterNotice />
        {detail.data.notices.map((n) => <Alert key={n} className="mb" type="warning" showIcon title={n} />)}
        {record.state === 'writing' && (
          <div className="mb" data-testid="paper-progress">
            <Progress percent={record.progress} status="active" />
            <div className="muted">{record.phase}（已写 {record.sectionsDone}/{record.sectionsTotal} 节，{record.chars.toLocaleString('zh-CN')} 字）。可以离开本页，写作在服务器上继续。</div>
          </div>
        )}
        {(record.state === 'failed' || record.state === 'cancelled') && (
          <Alert className="mb" type="error" showIcon title={STATE_LABEL[record.state].label} description={<>{record.error}{record.error ? '。' : ''}已写出的内容保留在下方；可回到大纲页重新提交，从中断处继续写。</>} />
        )}
        {failedReload && <Alert className="mb" type="warning" showIcon closable title={`重写第 ${failedReload.index + 1} 节失败：${failedReload.error ?? ''}`} />}
        {record.state === 'done' && (
          <Alert
            className="mb"
            type="success"
            showIcon
            title={`全文 ${record.chars.toLocaleString('zh-CN')} 字${record.weakSections ? `，其中 ${record.weakSections} 节偏短` : ''}${record.refundedFen ? `；不足所付字数的 85%，已按缺少的比例退回 ${formatFen(record.refundedFen)}` : ''}`}
            description={
              <Space wrap>
                下一步（把本文直接交给）：
                <NextStep id={id} title={record.title} />
                <Button size="small" type="primary" ghost onClick={() => navigate(`/paperwirte/biye?id=${id}`)} data-testid="paper-package-link">生成开题报告 / 任务书 / 文献综述</Button>
              </Space>
            }
          />
        )}
        {paper && paper.abstractZh && (
          <div className="paper-section">
            <div className="paper-heading level-1">摘要</div>
            <p className="paper-paragraph">{paper.abstractZh}</p>
            {paper.keywords.length > 0 && <p className="paper-paragraph"><b>关键词：</b>{paper.keywords.join('；')}</p>}
            {paper.abstractEn && <p className="paper-paragraph" lang="en"><b>Abstract: </b>{paper.abstractEn}</p>}
            {paper.keywordsEn.length > 0 && <p className="paper-paragraph" lang="en"><b>Key words: </b>{paper.keywordsEn.join('; ')}</p>}
          </div>
        )}
        {paper?.sections.map((s, i) => (
          <div key={s.index}>
            {parentsBefore(paper, i).map((h) => (
              <div key={h.number} className={`paper-heading level-${h.level}`}>{h.number} {h.title}</div>
            ))}
            <SectionCard paperId={id} section={s} reloading={reloadingIndex.has(s.index)} editable={record.state === 'done'} onChanged={refresh} />
          </div>
        ))}
        {writing && record.state === 'writing' && (
          <div className="paper-section writing" data-testid="paper-writing">
            <div className="paper-heading">正在撰写：{writing.heading}</div>
            <p className="paper-paragraph">{withoutMarkers(writing.text)}<span className="cursor">▍</span></p>
          </div>
        )}
        {paper && paper.sections.length === 0 && !writing && <Empty description="正文即将开始写作" />}
        {paper && paper.references.length > 0 && (
          <Collapse
            className="mt"
            defaultActiveKey={['refs']}
            items={[{
              key: 'refs',
              label: `参考文献（${paper.references.length}：文献库中的真实记录${paper.references.some((r) => r.own) ? '与您提供的文献' : ''}）`,
              children: paper.references.map((r) => (
                <div key={r.libraryId} className="paper-reference">
                  [{r.number}] {r.formatted}
                  {r.own && <Tag style={{ marginLeft: 6 }}>您提供的</Tag>}
                </div>
              )),
            }]}
          />
        )}
        <Alert className="mt" type="warning" showIcon title={paper?.disclaimer ?? DISCLAIMER} />
      </Card>
    </div>
  )
}
