import { Alert, Button, Card, Collapse, Empty, Progress, Result, Select, Space, Spin, Tag } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate, useSearchParams } from 'react-router'
import { paperList, paperPackage, paperPackageDownload } from './api'
import type { OtherView } from './types'
import { DISCLAIMER, WriterNotice } from './PaperStartPage'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSubmit } from '../../utils/useSubmit'

const WHAT: Record<OtherView['other'], string> = {
  proposal: '选题背景与意义、国内外研究现状、研究内容与方法、技术路线、进度安排、预期成果',
  task_book: '课题来源与目的、主要研究内容、基本要求、进度安排',
  review: '引言、国内研究现状、国外研究现状、研究评述、结论',
}

const busy = (d: OtherView) => d.status === 'queued' || d.status === 'running' || d.status === 'pending'

/** One document: start it, watch it being written, read and download it. */
function DocumentCard({ paperId, title, doc, onChanged }: { paperId: number; title: string; doc: OtherView; onChanged: () => void }) {
  const [starting, start] = useSubmit(async () => {
    await paperPackage(paperId, doc.other)
    onChanged()
  })
  const [downloading, download] = useSubmit(() => paperPackageDownload(paperId, title, doc))
  const statusTag = {
    none: <Tag>未生成</Tag>,
    pending: <Tag color="processing">排队中</Tag>,
    queued: <Tag color="processing">排队中</Tag>,
    running: <Tag color="processing">撰写中</Tag>,
    done: <Tag color="success">已完成</Tag>,
    failed: <Tag color="error">失败</Tag>,
    cancelled: <Tag>已取消</Tag>,
  }[doc.status]
  return (
    <Card
      size="small"
      className="mb"
      title={<Space>{doc.label}{statusTag}{doc.status === 'done' && <span className="muted">{doc.chars.toLocaleString('zh-CN')} 字</span>}</Space>}
      extra={
        doc.status === 'done' ? (
          <Button type="primary" size="small" loading={downloading} onClick={() => void download(undefined)} data-testid={`package-download-${doc.other}`}>下载 Word</Button>
        ) : doc.status === 'none' || doc.status === 'failed' || doc.status === 'cancelled' ? (
          <Button type="primary" size="small" loading={starting} onClick={() => void start(undefined)} data-testid={`package-start-${doc.other}`}>
            {doc.status === 'none' ? '免费生成' : '重新生成'}
          </Button>
        ) : null
      }
      data-testid={`package-${doc.other}`}
    >
      <div className="muted">包含：{WHAT[doc.other]}，以及主要参考文献（均为论文所用的文献库真实记录）。</div>
      {busy(doc) && (
        <div className="mt-s">
          <Progress percent={doc.progress} status="active" size="small" />
          <div className="muted">{doc.phase || '等待写作'}（可以离开本页，写作在服务器上继续）</div>
        </div>
      )}
      {doc.status === 'failed' && <Alert className="mt-s" type="error" showIcon title={`生成失败：${doc.error ?? '未知原因'}`} />}
      {doc.parts.length > 0 && (
        <Collapse
          className="mt-s"
          size="small"
          items={[
            {
              key: 'parts',
              label: `预览（已写 ${doc.parts.length} 部分）`,
              children: (
                <>
                  {doc.parts.map((p, i) => (
                    <div key={i} className="paper-section">
                      <div className="paper-heading level-1">
                        {p.heading}
                        {p.weak && <Tag color="orange" style={{ marginLeft: 8 }}>偏短</Tag>}
                      </div>
                      {p.text.split('\n').map((line, j) => <p key={j} className="paper-paragraph">{line}</p>)}
                    </div>
                  ))}
                  {doc.references.length > 0 && (
                    <>
                      <div className="paper-heading level-1">参考文献</div>
                      {doc.references.map((r, n) => <div key={n} className="paper-reference">[{n + 1}] {r}</div>)}
                    </>
                  )}
                </>
              ),
            },
          ]}
        />
      )}
    </Card>
  )
}

/** /paperwirte/biye — the graduation package (开题报告, 任务书, 文献综述) of a finished paper. */
export default function PaperPackagePage() {
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [params, setParams] = useSearchParams()
  const id = Number(params.get('id')) || 0
  const papers = useQuery({ queryKey: ['papers', 'finished'], queryFn: () => paperList(1, 50), enabled: Boolean(token) })
  const pack = useQuery({
    queryKey: ['paper-package', id],
    queryFn: () => paperPackage(id),
    enabled: Boolean(token) && id > 0,
    refetchInterval: (q) => (q.state.data?.documents.some(busy) ? 2000 : false),
  })
  if (!token) {
    return (
      <div className="page-card">
        <Card><Empty description="登录后为您的论文生成开题报告、任务书与文献综述"><Button type="primary" onClick={() => openLogin()}>登录</Button></Empty></Card>
      </div>
    )
  }
  const finished = (papers.data?.records ?? []).filter((r) => r.state === 'done')
  return (
    <div className="page-card">
      <Card title="毕业材料：开题报告 · 任务书 · 文献综述" extra={<Button onClick={() => navigate('/aipaper/list')}>我的论文</Button>}>
        <Alert
          className="mb"
          type="info"
          showIcon
          title="由已写完的论文免费生成"
          description="三份材料依据论文的大纲、摘要与所用文献写作，引用只来自论文检索到的文献库真实记录。"
        />
        <WriterNotice />
        <Space className="mb" wrap>
          <span>论文：</span>
          <Select
            style={{ minWidth: 320 }}
            placeholder="选择一篇已写完的论文"
            value={id || undefined}
            loading={papers.isLoading}
            onChange={(v: number) => setParams({ id: String(v) })}
            options={[
              ...finished.map((r) => ({ value: r.id, label: r.title })),
              ...(pack.data && !finished.some((r) => r.id === id) ? [{ value: id, label: pack.data.title }] : []),
            ]}
            data-testid="package-paper"
          />
        </Space>
        {!id && papers.data && finished.length === 0 && (
          <Empty description="还没有写完的论文">
            <Button type="primary" onClick={() => navigate('/aipaper/gc')}>去生成论文</Button>
          </Empty>
        )}
        {id > 0 && pack.isLoading && <Spin />}
        {id > 0 && pack.error && <Result status="warning" title="无法生成毕业材料" subTitle={pack.error.message} extra={<Button onClick={() => navigate(`/aipaper/content/${id}`)}>查看论文</Button>} />}
        {pack.data?.documents.map((d) => (
          <DocumentCard key={d.other} paperId={id} title={pack.data.title} doc={d} onChanged={() => void queryClient.invalidateQueries({ queryKey: ['paper-package', id] })} />
        ))}
        <Alert className="mt" type="warning" showIcon title={pack.data?.disclaimer ?? DISCLAIMER} />
      </Card>
    </div>
  )
}
