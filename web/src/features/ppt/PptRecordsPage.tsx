import { useState } from 'react'
import { Alert, Button, Card, Empty, List, Modal, Select, Space, Spin } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { ApiError } from '../../api/client'
import { useNavigate } from 'react-router'
import { pptChangeTemplate, pptDelete, pptDownload, pptList, pptLoad, pptPreviewPictures, pptTemplates } from './api'
import type { PptRecord } from './types'
import SlideImage from './SlideImage'
import ResponsiveTable, { titleColumn } from '../../components/ResponsiveTable'
import { DeleteTaskButton, TaskStatusCell, isUnderway } from '../../components/TaskStatus'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { formatDateTime } from '../../utils/format'
import { toastError, toastSuccess } from '../../utils/feedback'
import { useSubmit } from '../../utils/useSubmit'

const minutes = (seconds: number) => `${Math.floor(seconds / 60)} 分 ${seconds % 60} 秒`

/**
 * A finished deck's first slides: the layout's drawings at once, then the pictures LibreOffice
 * drew from the .pptx itself (figures as their pictures) when the server has them.
 */
function DeckPreviewStrip({ record }: { record: PptRecord }) {
  const drawn = useQuery({
    queryKey: ['ppt-preview-pictures', record.id, record.template],
    queryFn: () => pptPreviewPictures(record.id),
    enabled: record.status === 'done',
    staleTime: Infinity,
    // The server draws one deck at a time and says so rather than queueing: ask again shortly.
    retry: (count, error) => error instanceof ApiError && error.code === 'preview_busy' && count < 20,
    retryDelay: 3000,
  })
  const pictures = drawn.data?.template === record.template ? drawn.data.pictures : []
  return (
    <div style={{ display: 'flex', gap: 4 }} data-testid="ppt-previews">
      {record.previews.map((svg, i) => (
        <SlideImage key={i} svg={svg} picture={pictures[i]} alt={`${record.title} 第${i + 1}页`} width={64} />
      ))}
    </div>
  )
}

/** Every slide of a finished deck with its script. */
function ScriptModal({ id, onClose }: { id: number | null; onClose: () => void }) {
  const detail = useQuery({ queryKey: ['ppt-detail', id], queryFn: () => pptLoad(id ?? 0), enabled: id !== null })
  const slides = detail.data?.slides ?? []
  const total = slides.reduce((s, x) => s + x.seconds, 0)
  return (
    <Modal open={id !== null} title="幻灯片与讲稿" width={960} footer={null} onCancel={onClose} destroyOnHidden>
      {detail.isLoading ? (
        <Spin />
      ) : detail.error ? (
        <Alert type="error" showIcon title={detail.error.message} />
      ) : (
        <>
          <Alert className="mb" type="info" showIcon title={`共 ${slides.length} 页，讲稿约 ${minutes(total)}`} description={detail.data?.method} />
          <List
            dataSource={slides}
            data-testid="ppt-script"
            renderItem={(s, i) => (
              <List.Item>
                <div className="ppt-script-row">
                  <SlideImage svg={s.svg} alt={`第${i + 1}页：${s.title}`} />
                  <div>
                    <b>
                      第 {i + 1} 页 · {s.title}
                    </b>
                    <div className="muted">约 {s.seconds} 秒</div>
                    <div style={{ whiteSpace: 'pre-wrap', marginTop: 4 }}>{s.notes}</div>
                    {s.originals.length > 0 && (
                      <div className="ppt-originals" data-testid="ppt-originals">
                        <div className="muted">模型压缩过的要点：</div>
                        {s.originals.map((o, k) =>
                          o === s.bullets[k] ? null : (
                            <div key={k}>
                              幻灯片上：{s.bullets[k]}
                              <br />
                              论文原句：{o}
                            </div>
                          ),
                        )}
                      </div>
                    )}
                  </div>
                </div>
              </List.Item>
            )}
          />
        </>
      )}
    </Modal>
  )
}

/** /aippt/list — the user's decks: previews, status, downloads (PPTX, PDF), script, another template for free. */
export default function PptRecordsPage() {
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const [script, setScript] = useState<number | null>(null)
  const templates = useQuery({ queryKey: ['ppt-templates'], queryFn: pptTemplates, staleTime: 600_000, enabled: Boolean(token) })
  const list = useQuery({
    queryKey: ['ppt', page],
    queryFn: () => pptList(page, 10),
    enabled: Boolean(token),
    refetchInterval: (q) => (q.state.data?.records.some((r) => isUnderway(r.status)) ? 2000 : false),
  })
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['ppt'] })
  const [changing, change] = useSubmit(async ({ id, template }: { id: number; template: string }) => {
    await pptChangeTemplate(id, template)
    toastSuccess('已换用新模板，可重新下载')
    await refresh()
  })

  if (!token) {
    return (
      <div className="page-card">
        <Card>
          <Empty description="登录后查看您的答辩PPT">
            <Button type="primary" onClick={() => openLogin()}>登录</Button>
          </Empty>
        </Card>
      </div>
    )
  }

  const download = (r: PptRecord, format: 'pptx' | 'pdf') => pptDownload(r.id, r.title, format).catch((e: Error) => toastError(e.message))
  const actions = (r: PptRecord) => (
    <Space size={4} wrap>
      {r.status === 'done' && (
        <>
          <Button size="small" type="link" onClick={() => void download(r, 'pptx')} data-testid="ppt-download">下载PPTX</Button>
          <Button size="small" type="link" onClick={() => void download(r, 'pdf')}>下载PDF</Button>
          <Button size="small" type="link" onClick={() => setScript(r.id)}>讲稿</Button>
          <span className="muted">免费换模板</span>
          <Select
            size="small"
            style={{ width: 100 }}
            value={r.template}
            loading={changing}
            aria-label="更换模板"
            options={(templates.data ?? []).map((t) => ({ value: t.id, label: t.name }))}
            onChange={(template) => void change({ id: r.id, template })}
          />
        </>
      )}
      {r.status === 'pending' && <Button size="small" type="link" onClick={() => navigate(`/aippt/ppttype/${r.id}`)}>选择模板并支付</Button>}
      <DeleteTaskButton
        what="PPT记录"
        status={r.status}
        onDelete={async () => {
          await pptDelete(r.id)
          await refresh()
        }}
      />
    </Space>
  )
  const previews = (r: PptRecord) => (r.previews.length > 0 ? <DeckPreviewStrip record={r} /> : <span className="muted">—</span>)
  const made = (r: PptRecord) => (
    <span>
      {r.kindLabel} · {r.delivered ?? r.slides} 页
      {r.delivered != null && r.delivered < r.slides && <div className="muted">选 {r.slides} 页，论文内容只够 {r.delivered} 页</div>}
      {r.seconds != null && <div className="muted">讲稿约 {minutes(r.seconds)}</div>}
      <div className="muted">{formatDateTime(r.createdAt)}</div>
    </span>
  )

  const columns = [
    { title: '预览', key: 'previews', width: 216, render: (_: unknown, r: PptRecord) => previews(r) },
    titleColumn(180),
    { title: '类型与页数', key: 'made', width: 170, render: (_: unknown, r: PptRecord) => made(r) },
    { title: '模板', dataIndex: 'templateName', key: 'template', width: 72 },
    { title: '状态', key: 'status', width: 170, render: (_: unknown, r: PptRecord) => <TaskStatusCell {...r} running="生成中" /> },
    { title: '操作', key: 'actions', width: 250, fixed: 'right' as const, render: (_: unknown, r: PptRecord) => actions(r) },
  ]

  return (
    <div className="page-card">
      <Card title="PPT记录" extra={<Button type="primary" onClick={() => navigate('/aippt/ppt')}>新建PPT</Button>}>
        <ResponsiveTable<PptRecord>
          rowKey="id"
          loading={list.isLoading}
          error={list.error}
          onRetry={() => void list.refetch()}
          columns={columns}
          dataSource={list.data?.records ?? []}
          scroll={{ x: 1060 }}
          pagination={{ current: page, pageSize: 10, total: list.data?.total ?? 0, onChange: setPage }}
          locale={{ emptyText: <Empty description="还没有答辩PPT" /> }}
          card={{
            title: (r) => r.title,
            fullTitle: (r) => r.title,
            status: (r) => <TaskStatusCell {...r} running="生成中" />,
            figure: (r) => (r.previews.length ? { label: '前三页', value: previews(r) } : null),
            meta: (r) => `${r.kindLabel} · ${r.delivered ?? r.slides} 页 · ${r.templateName} · ${formatDateTime(r.createdAt)}`,
            actions,
          }}
        />
      </Card>
      <ScriptModal id={script} onClose={() => setScript(null)} />
    </div>
  )
}
