import { useEffect, useState } from 'react'
import { Alert, Button, Card, Col, Form, Input, Radio, Row, Select, Upload } from 'antd'
import { InboxOutlined } from '@ant-design/icons'
import { useQuery } from '@tanstack/react-query'
import { useNavigate, useSearchParams } from 'react-router'
import { pptLoad, pptSave } from './api'
import type { DeckForm, DeckKind, DeckSource } from './types'
import { paperList } from '../paper/api'
import { queryList as checkList } from '../check/api'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSubmit } from '../../utils/useSubmit'
import { toastWarning } from '../../utils/feedback'

const PAPER_FILES = '.docx,.pdf,.txt'
const LOGO_FILES = '.png,.jpg,.jpeg'
const LOGO_MAX_BYTES = 2 * 1024 * 1024

/** How every deck's text is made, said before anyone pays. */
export const METHOD_NOTICE =
  '幻灯片文字摘自您论文的原句（按章节提炼要点），论文中的表格和插图放入对应页，讲稿由相应段落的原句组成；较长的要点由模型压缩，只删减字词，每条都与原句核对数字、术语和语义，不合格的保留原句，不会出现论文中没有的数字或结论。'

const KINDS: { value: DeckKind; label: string; hint: string }[] = [
  { value: 'defence', label: '毕业答辩', hint: '讲稿按 10–15 分钟估计' },
  { value: 'proposal', label: '开题报告', hint: '讲稿按 5–10 分钟估计' },
  { value: 'course', label: '课程汇报', hint: '讲稿按 5–10 分钟估计' },
]

const SOURCES: { value: DeckSource; label: string }[] = [
  { value: 'upload', label: '上传论文' },
  { value: 'paper', label: '本站生成的论文' },
  { value: 'check', label: '本站查重的论文' },
  { value: 'outline', label: '填写题目与提纲' },
]

/** /aippt/ppt — the paper, the kind of talk, the slide count and the cover; then a template. */
export default function PptStartPage() {
  const navigate = useNavigate()
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const [form] = Form.useForm<DeckForm>()
  const [source, setSource] = useState<DeckSource>('upload')
  const [file, setFile] = useState<File | undefined>()
  const [logo, setLogo] = useState<File | undefined>()
  // 返回修改 from the template page: the draft's fields, saved again as the same draft.
  const draftId = Number(useSearchParams()[0].get('draft')) || undefined
  const draft = useQuery({ queryKey: ['ppt-detail', draftId], queryFn: () => pptLoad(draftId ?? 0), enabled: Boolean(token) && Boolean(draftId) })
  const editing = draft.data?.record.status === 'pending' ? draft.data.record : undefined
  useEffect(() => {
    if (!editing || !draft.data) return
    setSource(editing.source)
    form.setFieldsValue({
      title: editing.title,
      kind: editing.kind,
      slides: editing.slides,
      school: editing.school,
      presenter: editing.presenter,
      supervisor: editing.supervisor,
      date: editing.date,
      sourceId: editing.sourceId ?? undefined,
      outline: draft.data.outline,
    })
  }, [editing, draft.data, form])
  const papers = useQuery({ queryKey: ['ppt-sources', 'paper'], queryFn: () => paperList(1, 50), enabled: Boolean(token) && source === 'paper' })
  const checks = useQuery({ queryKey: ['ppt-sources', 'check'], queryFn: () => checkList(1, 50), enabled: Boolean(token) && source === 'check' })

  const [saving, save] = useSubmit(async (values: DeckForm) => {
    if (!token) {
      openLogin()
      return
    }
    // A draft being edited keeps its uploaded paper unless another is chosen.
    const keepsUpload = editing?.source === 'upload' && source === 'upload'
    if (source === 'upload' && !file && !keepsUpload) {
      toastWarning('请先选择论文文件')
      return
    }
    const saved = await pptSave({ ...values, id: editing?.id, source, file: source === 'upload' ? file : undefined, logo })
    navigate(`/aippt/ppttype/${saved.id}`)
  })

  const paperOptions = (papers.data?.records ?? [])
    .filter((p) => p.state === 'done')
    .map((p) => ({ value: p.id, label: p.title }))
  const checkOptions = (checks.data?.records ?? []).map((c) => ({ value: c.id, label: `${c.title}（${c.chars.toLocaleString('zh-CN')} 字）` }))

  return (
    <div className="page-card">
      <Card title="答辩PPT生成" extra={<Button type="link" onClick={() => navigate('/aippt/list')}>PPT记录</Button>}>
        <Alert className="mb" type="info" showIcon title="根据您的论文生成答辩演示文稿（.pptx），每页附讲稿" description={METHOD_NOTICE} data-testid="ppt-method" />
        <Form<DeckForm>
          form={form}
          layout="vertical"
          initialValues={{ kind: 'defence', slides: 15, title: '', outline: '', school: '', presenter: '', supervisor: '', date: '' }}
          onFinish={(v) => void save(v)}
        >
          <Form.Item label="论文来源">
            <Radio.Group optionType="button" value={source} onChange={(e) => setSource(e.target.value as DeckSource)} options={SOURCES} data-testid="ppt-source" />
          </Form.Item>
          {source === 'upload' && (
            <Form.Item
              label="论文文件"
              extra={
                editing?.source === 'upload' && !file
                  ? `已上传：${editing.fileName}（${editing.sections} 个标题）；如需更换，请重新选择文件`
                  : '支持 .docx、.pdf、.txt；请用 Word 的“标题 1 / 标题 2”样式标出章节（或“1 绪论”“1.1 研究背景”式编号）。扫描版 PDF 无法读取。'
              }
            >
              <Upload.Dragger
                accept={PAPER_FILES}
                maxCount={1}
                beforeUpload={(f) => {
                  setFile(f)
                  return false
                }}
                onRemove={() => setFile(undefined)}
                fileList={file ? [{ uid: 'paper', name: file.name, status: 'done' }] : []}
                data-testid="ppt-file"
              >
                <p className="ant-upload-drag-icon">
                  <InboxOutlined />
                </p>
                <p>点击或拖拽论文到这里</p>
              </Upload.Dragger>
            </Form.Item>
          )}
          {source === 'paper' && (
            <Form.Item label="选择论文" name="sourceId" rules={[{ required: true, message: '请选择一篇已完成的论文' }]} extra={papers.isSuccess && paperOptions.length === 0 ? '您还没有写完的论文' : undefined}>
              <Select options={paperOptions} loading={papers.isLoading} placeholder="本站生成并已完成的论文" />
            </Form.Item>
          )}
          {source === 'check' && (
            <Form.Item label="选择论文" name="sourceId" rules={[{ required: true, message: '请选择一篇查重过的论文' }]} extra={checks.isSuccess && checkOptions.length === 0 ? '您还没有查重记录' : undefined}>
              <Select options={checkOptions} loading={checks.isLoading} placeholder="在本站查重过的论文" />
            </Form.Item>
          )}
          <Form.Item label="演示文稿标题" name="title" rules={source === 'outline' ? [{ required: true, message: '请填写论文题目' }] : []} extra={source === 'outline' ? undefined : '留空时使用论文题目'}>
            <Input maxLength={200} placeholder="例如：基于改进YOLOv5的道路裂缝检测方法研究" />
          </Form.Item>
          {source === 'outline' && (
            <Form.Item
              label="提纲与要点"
              name="outline"
              rules={[{ required: true, message: '请填写提纲' }]}
              extra="每行一个标题（“1 绪论”“1.1 研究背景”），标题下写几句要点；幻灯片只用您写下的内容。"
            >
              <Input.TextArea rows={10} maxLength={20000} showCount placeholder={'1 绪论\n道路裂缝是路面病害的早期表现……\n2 研究方法\n本文采用……'} />
            </Form.Item>
          )}
          <Row gutter={16}>
            <Col xs={24} md={12}>
              <Form.Item label="类型" name="kind">
                <Radio.Group optionType="button" options={KINDS.map((k) => ({ value: k.value, label: k.label, title: k.hint }))} />
              </Form.Item>
            </Col>
            <Col xs={24} md={12}>
              <Form.Item label="页数" name="slides" extra="论文内容不够时页数会少于所选，不会凑页">
                <Radio.Group optionType="button" options={[10, 15, 20, 30].map((n) => ({ value: n, label: `${n} 页` }))} />
              </Form.Item>
            </Col>
          </Row>
          <Row gutter={16}>
            <Col xs={24} md={12}>
              <Form.Item label="学校名称" name="school">
                <Input maxLength={60} placeholder="封面显示" />
              </Form.Item>
            </Col>
            <Col xs={24} md={12}>
              <Form.Item label="答辩日期" name="date">
                <Input maxLength={40} placeholder="例如：2026年5月" />
              </Form.Item>
            </Col>
            <Col xs={24} md={12}>
              <Form.Item label="答辩人" name="presenter">
                <Input maxLength={40} />
              </Form.Item>
            </Col>
            <Col xs={24} md={12}>
              <Form.Item label="指导教师" name="supervisor">
                <Input maxLength={40} />
              </Form.Item>
            </Col>
          </Row>
          <Form.Item label="学校校徽（可选）" extra={`PNG 或 JPEG，不超过 2 MB；放在封面上，“校徽”模板每页都有${editing?.hasLogo && !logo ? '。已上传校徽，重新选择即替换' : ''}`}>
            <Upload
              accept={LOGO_FILES}
              maxCount={1}
              listType="picture"
              beforeUpload={(f) => {
                if (f.size > LOGO_MAX_BYTES) {
                  toastWarning('校徽图片不能超过 2 MB')
                  return Upload.LIST_IGNORE
                }
                setLogo(f)
                return false
              }}
              onRemove={() => setLogo(undefined)}
            >
              <Button>选择图片</Button>
            </Upload>
          </Form.Item>
          <Button type="primary" size="large" htmlType="submit" loading={saving} data-testid="ppt-next">
            {!token ? '登录后生成' : editing ? '保存并选择模板' : '下一步：选择模板'}
          </Button>
        </Form>
      </Card>
    </div>
  )
}
