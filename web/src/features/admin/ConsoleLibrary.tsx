import { useEffect, useRef, useState } from 'react'
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import { Alert, Button, Card, Col, Collapse, Input, InputNumber, Popconfirm, Progress, Row, Space, Statistic, Table, Tag, Upload } from 'antd'
import { InboxOutlined } from '@ant-design/icons'
import OperatorGate from './OperatorGate'
import { libraryDocs, librarySummary, libraryTasks, removeLibraryDocs, uploadLibraryBatch } from './api'
import type { LibraryDocRow, LibraryItemOutcome, LibraryTaskRow } from './types'
import { formatBytes } from './labels'
import ResponsiveTable from '../../components/ResponsiveTable'
import { useIsPhone } from '../../utils/useMediaQuery'
import { formatDateTime } from '../../utils/format'
import { toastError, toastSuccess } from '../../utils/feedback'
import type { ApiError } from '../../api/client'

const PAGE_SIZE = 20
const ACCEPTED = ['.jsonl', '.ndjson', '.zip', '.txt', '.docx', '.pdf']
const ENDED = ['done', 'failed', 'cancelled']
const STATUS: Record<string, { label: string; color: string }> = {
  pending: { label: '待处理', color: 'default' },
  queued: { label: '排队中', color: 'blue' },
  running: { label: '处理中', color: 'processing' },
  done: { label: '已完成', color: 'green' },
  failed: { label: '失败', color: 'red' },
  cancelled: { label: '已取消', color: 'default' },
}

/** 12.3 万字 / 856 字 */
function formatChars(chars: number): string {
  return chars >= 10000 ? `${(chars / 10000).toFixed(1)} 万字` : `${chars} 字`
}

function ResultLine({ task }: { task: LibraryTaskRow }) {
  const r = task.result
  if (task.status === 'failed') return <span className="text-danger">{task.error ?? '任务失败'}</span>
  if (!r) return <span className="muted">{task.phase || '等待后台处理'}</span>
  if (task.op === 'remove') return <span>已移除 {r.removed} 篇{r.missing > 0 ? `，${r.missing} 篇不在公共库中（已移除或属于用户私有库）` : ''}</span>
  return (
    <span data-testid="import-result">
      导入 <b>{r.imported}</b> 篇（{formatChars(r.importedChars)}），跳过 <b>{r.skipped}</b> 项，失败 <b>{r.failed}</b> 项
    </span>
  )
}

function ItemList({ items, more }: { items: LibraryItemOutcome[]; more: number }) {
  return (
    <>
      <Table<LibraryItemOutcome>
        size="small"
        rowKey={(_, i) => String(i)}
        dataSource={items}
        pagination={items.length > 10 ? { pageSize: 10, showSizeChanger: false } : false}
        columns={[
          { title: '文件 / 行', dataIndex: 'name', width: 220, ellipsis: true },
          {
            title: '结果',
            dataIndex: 'outcome',
            width: 70,
            render: (o: string) => (o === 'failed' ? <Tag color="red">失败</Tag> : <Tag>跳过</Tag>),
          },
          { title: '原因', dataIndex: 'reason' },
        ]}
      />
      {more > 0 && <p className="muted">另有 {more} 项未列出。</p>}
    </>
  )
}

function TaskCard({ task }: { task: LibraryTaskRow }) {
  const status = STATUS[task.status] ?? { label: task.status, color: 'default' }
  const running = !ENDED.includes(task.status)
  const items = task.result?.items ?? []
  const listed = (task.result?.skipped ?? 0) + (task.result?.failed ?? 0)
  return (
    <div className="library-task" data-testid="library-task">
      <Space wrap size={8}>
        <b>{task.title}</b>
        <Tag color={status.color}>{status.label}</Tag>
        <span className="muted">
          {task.loginName} · {formatDateTime(task.createdAt)}
        </span>
      </Space>
      {running && <Progress percent={task.progress} size="small" status="active" format={(p) => `${p}%`} />}
      <div>
        <ResultLine task={task} />
        {running && task.phase && <span className="muted"> · {task.phase}</span>}
      </div>
      {items.length > 0 && (
        <Collapse
          size="small"
          ghost
          items={[{ key: 'items', label: `查看跳过与失败的 ${listed} 项`, children: <ItemList items={items} more={listed - items.length} /> }]}
        />
      )}
    </div>
  )
}

function UploadCard({ maxBytes, onQueued }: { maxBytes: number; onQueued: () => void }) {
  const [percent, setPercent] = useState<number | null>(null)
  const [fileName, setFileName] = useState('')
  const start = async (file: File) => {
    const lower = file.name.toLowerCase()
    if (!ACCEPTED.some((ext) => lower.endsWith(ext))) {
      toastError('不支持的文件类型：请上传 .jsonl、.zip（内含 .txt/.docx/.pdf）或单个 .txt/.docx/.pdf 文件')
      return
    }
    if (maxBytes > 0 && file.size > maxBytes) {
      toastError(`文件 ${formatBytes(file.size)}，超过一批 ${formatBytes(maxBytes)} 的上限，请分成几批上传`)
      return
    }
    setFileName(file.name)
    setPercent(0)
    try {
      await uploadLibraryBatch(file, setPercent)
      toastSuccess(`已上传“${file.name}”，后台正在导入`)
      onQueued()
    } catch (e) {
      // The client toasts the server's message (e.g. an unreadable zip).
      void (e as ApiError)
    } finally {
      setPercent(null)
    }
  }
  return (
    <Card title="批量导入" size="small">
      <Upload.Dragger
        accept={ACCEPTED.join(',')}
        multiple={false}
        showUploadList={false}
        disabled={percent !== null}
        beforeUpload={(file) => {
          void start(file)
          return false
        }}
        data-testid="library-upload"
      >
        <p className="ant-upload-drag-icon">
          <InboxOutlined />
        </p>
        <p className="ant-upload-text">点击或拖入文件导入公共比对库</p>
        <p className="ant-upload-hint">
          JSON Lines（每行一篇：text 必填，title、author、year、source 可选）、内含 .txt/.docx/.pdf 的 .zip，或单个文件；每批不超过 {formatBytes(maxBytes)}。
          内容相同的文献只收一次。
        </p>
      </Upload.Dragger>
      {percent !== null && (
        <div className="library-upload-progress" data-testid="upload-progress">
          <span>正在上传 {fileName}</span>
          <Progress percent={percent} status="active" />
        </div>
      )}
    </Card>
  )
}

function LibraryBody() {
  const client = useQueryClient()
  const [query, setQuery] = useState({ q: '', year: null as number | null, page: 1 })
  const [selected, setSelected] = useState<number[]>([])
  const phone = useIsPhone()
  const summary = useQuery({ queryKey: ['admin', 'library', 'summary'], queryFn: librarySummary, refetchInterval: 15_000 })
  const tasks = useQuery({
    queryKey: ['admin', 'library', 'tasks'],
    queryFn: libraryTasks,
    refetchInterval: (q) => ((q.state.data ?? []).some((t) => !ENDED.includes(t.status)) ? 1500 : 15_000),
  })
  const docs = useQuery({
    queryKey: ['admin', 'library', 'docs', query],
    queryFn: () => libraryDocs(query.q, query.year, query.page, PAGE_SIZE),
    placeholderData: keepPreviousData,
  })
  // When a task ends, the counts and the list change: read them again.
  const endedIds = (tasks.data ?? []).filter((t) => ENDED.includes(t.status)).map((t) => t.taskId).join(',')
  const seenEnded = useRef<string | null>(null)
  useEffect(() => {
    if (seenEnded.current !== null && seenEnded.current !== endedIds) {
      void client.invalidateQueries({ queryKey: ['admin', 'library', 'summary'] })
      void client.invalidateQueries({ queryKey: ['admin', 'library', 'docs'] })
    }
    seenEnded.current = endedIds
  }, [endedIds, client])
  const refresh = () => client.invalidateQueries({ queryKey: ['admin', 'library'] })
  const remove = async (ids: number[]) => {
    try {
      await removeLibraryDocs(ids)
      toastSuccess(`已提交移除 ${ids.length} 篇，后台处理完成后从列表消失`)
      setSelected([])
      await refresh()
    } catch {
      // Toasted by the client.
    }
  }
  const s = summary.data
  const taskRows = tasks.data ?? []
  return (
    <Space direction="vertical" size={16} style={{ width: '100%' }}>
      {s && s.workers === 0 && (
        <Alert
          type="warning"
          showIcon
          message="当前没有后台进程处理比对库任务"
          description="上传的文件会排队等待，直到 wenjian serve 或 wenjian worker 运行。"
          data-testid="library-no-worker"
        />
      )}
      <Row gutter={[12, 12]}>
        <Col xs={12} md={6}>
          <Card size="small">
            <Statistic title="公共比对库" value={s?.publicDocs ?? '—'} suffix="篇" />
            <div className="muted">{s ? formatChars(s.publicChars) : ''}</div>
          </Card>
        </Col>
        <Col xs={12} md={6}>
          <Card size="small">
            <Statistic title="学生私有库" value={s?.privateDocs ?? '—'} suffix="篇" />
            <div className="muted">仅计数，不列出</div>
          </Card>
        </Col>
        <Col xs={12} md={6}>
          <Card size="small">
            <Statistic title="本人已发表" value={s?.ownPublishedDocs ?? '—'} suffix="篇" />
            <div className="muted">学生本人发表的文献，报告中单列</div>
          </Card>
        </Col>
        <Col xs={12} md={6}>
          <Card size="small">
            <Statistic title="索引大小" value={s && s.measuredAt > 0 ? formatBytes(s.indexBytes) : '未测量'} />
            <div className="muted">{s ? `${s.backend === 'database' ? '数据库' : '本机'}索引${s.measuredAt > 0 ? ` · ${formatDateTime(s.measuredAt)}` : ''}` : ''}</div>
          </Card>
        </Col>
      </Row>
      <Row gutter={[16, 16]}>
        <Col xs={24} lg={10}>
          <UploadCard maxBytes={s?.maxUploadBytes ?? 0} onQueued={() => void refresh()} />
        </Col>
        <Col xs={24} lg={14}>
          <Card title="导入与移除记录" size="small" extra={<Button size="small" onClick={() => void tasks.refetch()}>刷新</Button>}>
            {taskRows.length === 0 ? (
              <p className="muted">还没有从后台导入或移除过文献。也可在命令行用 wenjian corpus import 导入。</p>
            ) : (
              <div className="library-tasks">
                {taskRows.slice(0, 8).map((t) => (
                  <TaskCard key={t.taskId} task={t} />
                ))}
              </div>
            )}
          </Card>
        </Col>
      </Row>
      <Card title="公共库文献" size="small">
        <Space wrap className="library-toolbar">
          <Input.Search
            allowClear
            placeholder="题名、作者或来源"
            onSearch={(v) => setQuery((q) => ({ ...q, q: v.trim(), page: 1 }))}
            style={{ width: 220 }}
            data-testid="library-search"
          />
          <InputNumber
            placeholder="年份"
            min={1000}
            max={2100}
            value={query.year}
            onChange={(year) => setQuery((q) => ({ ...q, year: typeof year === 'number' ? year : null, page: 1 }))}
            style={{ width: 100 }}
            data-testid="library-year"
          />
          {!phone && (
            <Popconfirm
              title={`从公共比对库移除选中的 ${selected.length} 篇？`}
              description="移除后查重不再比对这些文献；已出的报告不受影响。"
              okText="移除"
              cancelText="取消"
              disabled={selected.length === 0}
              onConfirm={() => remove(selected)}
            >
              <Button danger disabled={selected.length === 0} data-testid="library-remove-selected">
                移除选中{selected.length > 0 ? `（${selected.length}）` : ''}
              </Button>
            </Popconfirm>
          )}
        </Space>
        <ResponsiveTable<LibraryDocRow>
          rowKey="id"
          loading={docs.isFetching && !docs.data}
          error={docs.error as Error | null}
          onRetry={() => docs.refetch()}
          dataSource={docs.data?.records ?? []}
          rowSelection={{ selectedRowKeys: selected, onChange: (keys) => setSelected(keys.map(Number)) }}
          scroll={{ x: 900 }}
          locale={{ emptyText: query.q || query.year ? '没有符合条件的文献' : '公共比对库还是空的：从上方导入一批文献' }}
          pagination={{
            current: query.page,
            pageSize: PAGE_SIZE,
            total: docs.data?.total ?? 0,
            onChange: (page) => setQuery((q) => ({ ...q, page })),
            showSizeChanger: false,
            showTotal: (total) => `共 ${total} 篇`,
          }}
          columns={[
            { title: '编号', dataIndex: 'id', width: 80 },
            { title: '题名', dataIndex: 'title', ellipsis: true },
            { title: '作者', dataIndex: 'author', width: 140, ellipsis: true },
            { title: '年份', dataIndex: 'year', width: 70, render: (y: number | null) => y ?? '—' },
            { title: '来源', dataIndex: 'source', width: 160, ellipsis: true },
            { title: '字数', dataIndex: 'chars', width: 90, align: 'right', render: (c: number) => c.toLocaleString('zh-CN') },
            { title: '入库时间', dataIndex: 'addedAt', width: 160, render: formatDateTime },
            {
              title: '操作',
              key: 'actions',
              width: 70,
              render: (_: unknown, d) => (
                <Popconfirm title={`移除《${d.title}》？`} okText="移除" cancelText="取消" onConfirm={() => remove([d.id])}>
                  <Button type="link" danger size="small" data-testid="library-remove">
                    移除
                  </Button>
                </Popconfirm>
              ),
            },
          ]}
          card={{
            title: (d) => d.title,
            figure: (d) => ({ label: '字数', value: d.chars.toLocaleString('zh-CN') }),
            meta: (d) => [d.author, d.year, d.source].filter(Boolean).join(' · '),
            actions: (d) => (
              <Popconfirm title={`移除《${d.title}》？`} okText="移除" cancelText="取消" onConfirm={() => remove([d.id])}>
                <Button danger size="small">
                  移除
                </Button>
              </Popconfirm>
            ),
          }}
          cardTestId="library-card"
        />
      </Card>
    </Space>
  )
}

/** /admin/library: the public library — import batches, follow them, search, remove, sizes. */
export default function ConsoleLibrary() {
  return (
    <OperatorGate>
      <div className="page-card">
        <LibraryBody />
      </div>
    </OperatorGate>
  )
}
