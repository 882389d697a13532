import { useEffect, useMemo, useState } from 'react'
import { Alert, Button, Card, Form, Input, Radio, Select, Space, Upload } from 'antd'
import { useLocation, useNavigate } from 'react-router'
import { paperOptions, paperReadOutline, paperReadReferences, paperSubmit, type PaperForm, type PaperOption } from './api'
import { useQuery } from '@tanstack/react-query'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSiteStore } from '../../stores/site'
import { useSubmit } from '../../utils/useSubmit'
import { formatFen } from '../../utils/format'
import { toastSuccess, toastWarning } from '../../utils/feedback'

const MAX_OWN_REFERENCES = 50
const REFERENCE_FILES = '.bib,.ris,.enw,.txt,.docx,.pdf'
const OUTLINE_FILES = '.docx,.txt,.pdf'

export const DISCLAIMER =
  '生成的内容是写作草稿，仅供参考：请逐段阅读、核实引用与数据，并改写为自己的文字后再使用。许多高校将未声明的 AI 生成内容视为学术不端。'

/** Lengths offered when the server names no price tiers. */
const DEFAULT_LENGTHS = [5000, 8000, 10000, 15000, 20000]
/** The lengths the generator writes (compose::outline MIN_WORDS..=MAX_WORDS). */
const MIN_WORDS = 1000
const MAX_WORDS = 50000

/** The lengths to choose from: the operator's price tiers (console → 价格设置), in order. */
export function lengthOptions(tiers: { words: number }[]): number[] {
  const words = [...new Set(tiers.map((t) => t.words).filter((w) => w >= MIN_WORDS && w <= MAX_WORDS))].sort((a, b) => a - b)
  return words.length > 0 ? words : DEFAULT_LENGTHS
}

/** 5千字, 1.5万字. */
const lengthLabel = (w: number) => `${w / 1000 >= 10 ? `${w / 10000}万` : `${w / 1000}千`}字`

/** What the page says about who writes: the small local model's drafts are short and weak. */
export function WriterNotice() {
  const writer = useSiteStore((s) => s.paperWriter)
  const unavailable = useSiteStore((s) => s.paperUnavailable)
  if (unavailable) return <Alert className="mb" type="error" showIcon title="论文生成暂不可用" description={unavailable} data-testid="paper-unavailable" />
  if (writer === 'local')
    return (
      <Alert
        className="mb"
        type="warning"
        showIcon
        title="本站当前用本地小模型写作：草稿偏短、质量有限"
        description="本地模型在本服务器上逐节写作，速度较慢（每千字约数分钟），内容需要您大量修改。管理员在配置中设置 OpenAI 兼容的模型服务（llm_base_url、llm_model，并将 paper_provider 设为 endpoint 或 auto）后，可生成质量更好的初稿。"
      />
    )
  return null
}

/** How a reference file was read, in the user's words. */
function formatLabel(format: string) {
  return ({ bibtex: 'BibTeX', ris: 'RIS', endnote: 'EndNote', note_express: 'NoteExpress', lines: '参考文献列表' } as Record<string, string>)[format] ?? format
}

/** /aipaper/gc, /papergc/gc, /paperwirte/gc — title, major, kind, degree, length, keywords → a free outline. */
/** The options when the site's list cannot be read. */
const FALLBACK_OPTIONS: PaperOption[] = [
  { id: 'thesis', value: { group: 'kind', name: '毕业论文', enabled: true } },
  { id: 'article', value: { group: 'kind', name: '学术论文 / 期刊论文', enabled: true } },
  { id: 'associate', value: { group: 'degree', name: '专科', enabled: true } },
  { id: 'bachelor', value: { group: 'degree', name: '本科', enabled: true } },
  { id: 'master', value: { group: 'degree', name: '硕士', enabled: true } },
]

/** What each entry of the menu opens: 毕业论文生成 writes theses only, 论文写作 starts from a journal article. */
const ENTRIES: Record<string, { title: string; kind: PaperForm['kind']; fixed: boolean }> = {
  '/papergc/gc': { title: '毕业论文生成', kind: 'thesis', fixed: true },
  '/paperwirte/gc': { title: '论文写作（学术论文 / 期刊论文）', kind: 'article', fixed: false },
}

export default function PaperStartPage() {
  const navigate = useNavigate()
  const entry = ENTRIES[useLocation().pathname] ?? { title: 'AI论文生成', kind: 'thesis', fixed: false }
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const tiers = useSiteStore((s) => s.paperPriceTiers) ?? []
  const [form] = Form.useForm<PaperForm>()
  const lengths = lengthOptions(tiers)
  const [chosenWords, setWords] = useState(8000)
  // The tiers may change (or arrive after the first render): keep a length that is offered.
  const words = lengths.includes(chosenWords) ? chosenWords : lengths.reduce((a, b) => (Math.abs(b - chosenWords) < Math.abs(a - chosenWords) ? b : a))
  // The same page serves three menu entries: moving between them sets the kind each stands for.
  useEffect(() => form.setFieldValue('kind', entry.kind), [form, entry.kind])
  // What the operator offers; until it is known, everything is shown (the server checks anyway).
  const { data: options, isError } = useQuery({ queryKey: ['paper-options'], queryFn: paperOptions, staleTime: 60_000 })
  const [kinds, degrees] = useMemo(() => {
    // Nothing while the site's list loads (no option shown that then disappears); all of them
    // if it cannot be read (the server refuses what is off anyway).
    const known = options ?? (isError ? FALLBACK_OPTIONS : [])
    const offered = (group: 'kind' | 'degree') =>
      known.filter((o) => o.value.group === group && o.value.enabled).map((o) => ({ label: o.value.name, value: o.id }))
    return [offered('kind'), offered('degree')]
  }, [options, isError])
  const kindClosed = options !== undefined && !kinds.some((k) => k.value === entry.kind) && entry.fixed
  useEffect(() => {
    const degree = form.getFieldValue('degree') as string | undefined
    if (degrees.length > 0 && !degrees.some((d) => d.value === degree)) form.setFieldValue('degree', degrees.find((d) => d.value === 'bachelor')?.value ?? degrees[0].value)
    const kind = form.getFieldValue('kind') as string | undefined
    if (!entry.fixed && kinds.length > 0 && !kinds.some((k) => k.value === kind)) form.setFieldValue('kind', kinds[0].value)
  }, [form, degrees, kinds, entry.fixed])
  const [skipped, setSkipped] = useState<string[]>([])
  const [importing, importFile] = useSubmit(async ({ file, what }: { file: File; what: 'references' | 'outline' }) => {
    if (what === 'outline') {
      const read = await paperReadOutline(file)
      form.setFieldValue('outline', read.text)
      toastSuccess(`已读取大纲：${read.chapters} 章${read.sections ? `、${read.sections} 节` : ''}，可在下方修改`)
      return
    }
    const read = await paperReadReferences(file)
    const current = (form.getFieldValue('references') as string | undefined) ?? ''
    const lines = current.split('\n').map((l) => l.trim()).filter(Boolean)
    const added = read.references.filter((r) => !lines.includes(r))
    const merged = [...lines, ...added]
    const kept = merged.slice(0, MAX_OWN_REFERENCES)
    form.setFieldValue('references', kept.join('\n'))
    setSkipped(read.skipped)
    const dropped = merged.length - kept.length + read.truncated
    const note = dropped > 0 ? `；超出 ${MAX_OWN_REFERENCES} 条上限的 ${dropped} 条未导入` : ''
    if (read.skipped.length > 0 || dropped > 0) toastWarning(`已导入 ${added.length} 条参考文献，${read.skipped.length} 条无法识别${note}`)
    else toastSuccess(`已导入 ${added.length} 条参考文献（${formatLabel(read.format)}）`)
  })
  const uploadButton = (what: 'references' | 'outline', accept: string, testId: string) => (
    <Upload
      accept={accept}
      showUploadList={false}
      beforeUpload={(file) => {
        void importFile({ file, what })
        return false
      }}
    >
      <Button size="small" loading={importing} data-testid={testId}>
        从文件导入
      </Button>
    </Upload>
  )
  const price = [...tiers].sort((a, b) => a.words - b.words).find((t) => t.words >= words) ?? tiers[tiers.length - 1]
  const [submitting, submit] = useSubmit(async () => {
    const values = await form.validateFields()
    if (!token) {
      openLogin()
      return
    }
    const detail = await paperSubmit({ ...values, words })
    navigate(`/aipaper/outline/${detail.record.id}`)
  })
  return (
    <div className="page-card">
      <Card title={entry.title} extra={<Button type="link" onClick={() => navigate('/aipaper/list')}>我的论文</Button>}>
        <Alert
          className="mb"
          type="info"
          showIcon
          title="先免费生成大纲，确认后再付费写作"
          description="大纲的每一节都附有从文献库检索到的真实文献；正文只引用这些文献，引用编号与参考文献表一一对应，不会出现编造的“幽灵引用”。"
        />
        <WriterNotice />
        {kindClosed && <Alert className="mb" type="warning" showIcon title={`本站暂未开放${entry.title}`} description="请从菜单选择其他论文生成方式，或联系站点管理员。" data-testid="paper-kind-closed" />}
        <Form form={form} layout="vertical" initialValues={{ kind: entry.kind, degree: 'bachelor', keywords: '', references: '', outline: '' }} style={{ maxWidth: 720 }}>
          <Form.Item
            label="论文题目"
            name="title"
            rules={[
              { required: true, whitespace: true, message: '请输入论文题目' },
              { min: 2, max: 60, message: '题目须为 2 到 60 个字' },
            ]}
          >
            <Input placeholder="例如：高校图书馆管理系统的设计与实现" maxLength={60} showCount data-testid="paper-title" />
          </Form.Item>
          <Form.Item label="专业 / 研究领域" name="field" rules={[{ required: true, whitespace: true, message: '请输入专业' }, { max: 30, message: '最多 30 个字' }]}>
            <Input placeholder="例如：计算机科学与技术" maxLength={30} data-testid="paper-field" />
          </Form.Item>
          <Form.Item label="论文类型" name="kind" hidden={entry.fixed}>
            <Radio.Group optionType="button" options={kinds} data-testid="paper-kinds" />
          </Form.Item>
          <Form.Item label="学历层次" name="degree">
            <Radio.Group optionType="button" options={degrees} data-testid="paper-degrees" />
          </Form.Item>
          <Form.Item label="目标字数">
            <Select
              value={words}
              onChange={setWords}
              style={{ width: 240 }}
              data-testid="paper-words"
              options={lengths.map((w) => ({ label: lengthLabel(w), value: w }))}
            />
          </Form.Item>
          <Form.Item label="关键词（可选，用逗号分隔）" name="keywords">
            <Input placeholder="例如：图书馆，借阅管理，B/S 架构" maxLength={120} />
          </Form.Item>
          <Form.Item
            label={<Space>我的参考文献（可选）{uploadButton('references', REFERENCE_FILES, 'paper-import-references')}</Space>}
            name="references"
            extra="每行一条，GB/T 7714 格式，例如：张三. 论文题目[J]. 期刊名, 2020, 12(3): 45-50.  最多 50 条；也可导入知网、Zotero、EndNote 导出的 .bib / .ris / .enw 文件，或含参考文献列表的 Word、PDF。它们会与文献库中的记录一起提供给相关章节引用。"
          >
            <Input.TextArea autoSize={{ minRows: 2, maxRows: 8 }} maxLength={20000} placeholder="[1] 作者. 题名[J]. 刊名, 年, 卷(期): 页码." data-testid="paper-references" />
          </Form.Item>
          {skipped.length > 0 && (
            <Alert
              className="mb"
              type="warning"
              showIcon
              closable
              onClose={() => setSkipped([])}
              title={`以下 ${skipped.length} 条无法识别，未导入（请按 GB/T 7714 格式手动补充）`}
              description={
                <ul className="plain-list">
                  {skipped.slice(0, 8).map((s, i) => (
                    <li key={i}>{s}</li>
                  ))}
                  {skipped.length > 8 && <li>……等 {skipped.length} 条</li>}
                </ul>
              }
              data-testid="paper-references-skipped"
            />
          )}
          <Form.Item
            label={<Space>自拟大纲（可选）{uploadButton('outline', OUTLINE_FILES, 'paper-import-outline')}</Space>}
            name="outline"
            extra="每行一个标题，例如“第1章 绪论”“1.1 研究背景”，可在标题后注明“（约800字）”。填写后按您的大纲检索文献并写作，不再由模型拟定；各节字数会按目标字数分配。"
          >
            <Input.TextArea autoSize={{ minRows: 2, maxRows: 12 }} maxLength={5000} placeholder={'第1章 绪论\n1.1 研究背景\n1.2 研究意义\n第2章 ……'} data-testid="paper-outline" />
          </Form.Item>
          <Space direction="vertical" size={12}>
            {price && (
              <div data-testid="paper-price">
                全文写作价格：<b style={{ color: "#cf1322", fontSize: 18 }}>{formatFen(price.fen)}</b>
                <span className="muted">（{words.toLocaleString('zh-CN')} 字档；生成大纲免费，确认大纲后从余额扣费，写作失败全额退款）</span>
              </div>
            )}
            <Button type="primary" size="large" loading={submitting} disabled={kindClosed} onClick={() => void submit(undefined)} data-testid="paper-start">
              {token ? '免费生成大纲' : '登录后生成大纲'}
            </Button>
          </Space>
        </Form>
        <Alert className="mt" type="warning" showIcon title={DISCLAIMER} />
      </Card>
    </div>
  )
}
