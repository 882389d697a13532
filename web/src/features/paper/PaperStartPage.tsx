import { useState } from 'react'
import { Alert, Button, Card, Form, Input, Radio, Select, Space } from 'antd'
import { useNavigate } from 'react-router'
import { paperSubmit, type PaperForm } from './api'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSiteStore } from '../../stores/site'
import { useSubmit } from '../../utils/useSubmit'
import { formatFen } from '../../utils/format'

export const DISCLAIMER =
  '生成的内容是写作草稿，仅供参考：请逐段阅读、核实引用与数据，并改写为自己的文字后再使用。许多高校将未声明的 AI 生成内容视为学术不端。'

const LENGTHS = [5000, 8000, 10000, 15000, 20000]

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

/** /aipaper/gc, /papergc/gc, /paperwirte/gc — title, major, kind, degree, length, keywords → a free outline. */
export default function PaperStartPage() {
  const navigate = useNavigate()
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const tiers = useSiteStore((s) => s.paperPriceTiers) ?? []
  const [form] = Form.useForm<PaperForm>()
  const [words, setWords] = useState(8000)
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
      <Card title="AI论文生成" extra={<Button type="link" onClick={() => navigate('/aipaper/list')}>我的论文</Button>}>
        <Alert
          className="mb"
          type="info"
          showIcon
          title="先免费生成大纲，确认后再付费写作"
          description="大纲的每一节都附有从文献库检索到的真实文献；正文只引用这些文献，引用编号与参考文献表一一对应，不会出现编造的“幽灵引用”。"
        />
        <WriterNotice />
        <Form form={form} layout="vertical" initialValues={{ kind: 'thesis', degree: 'bachelor', keywords: '', references: '' }} style={{ maxWidth: 720 }}>
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
          <Form.Item label="论文类型" name="kind">
            <Radio.Group optionType="button" options={[{ label: '毕业论文', value: 'thesis' }, { label: '学术论文 / 期刊论文', value: 'article' }]} />
          </Form.Item>
          <Form.Item label="学历层次" name="degree">
            <Radio.Group optionType="button" options={[{ label: '专科', value: 'associate' }, { label: '本科', value: 'bachelor' }, { label: '硕士', value: 'master' }]} />
          </Form.Item>
          <Form.Item label="目标字数">
            <Select
              value={words}
              onChange={setWords}
              style={{ width: 240 }}
              data-testid="paper-words"
              options={LENGTHS.map((w) => ({ label: `${w / 1000 >= 10 ? `${w / 10000}万` : `${w / 1000}千`}字`, value: w }))}
            />
          </Form.Item>
          <Form.Item label="关键词（可选，用逗号分隔）" name="keywords">
            <Input placeholder="例如：图书馆，借阅管理，B/S 架构" maxLength={120} />
          </Form.Item>
          <Form.Item
            label="我的参考文献（可选）"
            name="references"
            extra="每行一条，GB/T 7714 格式，例如：张三. 论文题目[J]. 期刊名, 2020, 12(3): 45-50.  最多 50 条；它们会与文献库中的记录一起提供给相关章节引用。"
          >
            <Input.TextArea autoSize={{ minRows: 2, maxRows: 8 }} maxLength={20000} placeholder="[1] 作者. 题名[J]. 刊名, 年, 卷(期): 页码." />
          </Form.Item>
          <Space direction="vertical" size={12}>
            {price && (
              <div data-testid="paper-price">
                全文写作价格：<b style={{ color: "#cf1322", fontSize: 18 }}>{formatFen(price.fen)}</b>
                <span className="muted">（{words.toLocaleString('zh-CN')} 字档；生成大纲免费，确认大纲后从余额扣费，写作失败全额退款）</span>
              </div>
            )}
            <Button type="primary" size="large" loading={submitting} onClick={() => void submit(undefined)} data-testid="paper-start">
              {token ? '免费生成大纲' : '登录后生成大纲'}
            </Button>
          </Space>
        </Form>
        <Alert className="mt" type="warning" showIcon title={DISCLAIMER} />
      </Card>
    </div>
  )
}
