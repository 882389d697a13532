import { useQuery } from '@tanstack/react-query'
import { Alert, Button, Card, Col, Empty, Row, Statistic, Table, Tag } from 'antd'
import OperatorGate from './OperatorGate'
import BarChart from './BarChart'
import ModelEngines from './ModelEngines'
import { dashboard } from './api'
import { formatBytes, formatWait, kindLabel } from './labels'
import { formatDateTime, formatFen } from '../../utils/format'
import { STATUS } from '../../components/TaskStatus'
import type { TaskStatus } from '../check/types'
import type { Dashboard } from './types'

const STATUS_ORDER: TaskStatus[] = ['pending', 'queued', 'running', 'done', 'failed', 'cancelled']

/** Tasks by kind, one row per kind with a column per status. */
function taskRows(data: Dashboard) {
  const byKind = new Map<string, Record<string, number>>()
  for (const t of data.tasks) {
    const row = byKind.get(t.kind) ?? {}
    row[t.status] = t.count
    byKind.set(t.kind, row)
  }
  return [...byKind.entries()].map(([kind, counts]) => ({
    kind,
    counts,
    total: Object.values(counts).reduce((a, b) => a + b, 0),
  }))
}

function DashboardBody() {
  // Refreshed every 10 s: queue depth and workers are what an operator watches.
  const { data, error, refetch, isLoading } = useQuery({ queryKey: ['admin', 'dashboard'], queryFn: dashboard, refetchInterval: 10_000 })
  if (error) {
    return (
      <Card>
        <Empty description={`概览加载失败：${(error as Error).message}`}>
          <Button onClick={() => refetch()}>重试</Button>
        </Empty>
      </Card>
    )
  }
  if (!data) return <Card loading={isLoading} />
  const revenueTotal = data.revenue.reduce((a, d) => a + d.fen, 0)
  const waiting = data.queues.reduce((a, q) => a + q.waiting, 0)
  const oldest = Math.max(0, ...data.queues.map((q) => q.oldestWaitingSeconds))
  const rows = taskRows(data)
  const stalled = data.queues.reduce((a, q) => a + q.stalled, 0)
  return (
    <>
      {data.sandboxPayments && <Alert type="warning" showIcon className="mb" message="支付沙箱模式：订单由本机模拟器“支付”，不会有真实资金到账。" />}
      {waiting > 0 && data.workers.length === 0 && (
        <Alert type="error" showIcon className="mb" message={`有 ${waiting} 个任务在排队，但没有在线的工作进程`} description="请检查 wenjian serve / wenjian worker 是否在运行。" />
      )}
      <Row gutter={[16, 16]}>
        <Col xs={12} md={6}>
          <Card size="small">
            <div data-testid="stat-users">
              <Statistic title="用户总数" value={data.usersTotal} />
            </div>
          </Card>
        </Col>
        <Col xs={12} md={6}>
          <Card size="small"><Statistic title="今日 / 近7天新增" value={`${data.usersToday} / ${data.usersWeek}`} /></Card>
        </Col>
        <Col xs={12} md={6}>
          <Card size="small"><Statistic title="近14天收入" value={formatFen(revenueTotal)} /></Card>
        </Col>
        <Col xs={12} md={6}>
          <Card size="small">
            <Statistic title="排队任务" value={waiting} suffix={waiting > 0 ? <span className="muted stat-suffix">最久 {formatWait(oldest)}</span> : null} />
          </Card>
        </Col>
      </Row>
      <Row gutter={[16, 16]} className="mt">
        <Col xs={24} lg={14}>
          <Card size="small" title="近14天每日收入（元）">
            <BarChart
              testId="revenue-chart"
              empty="近14天没有在线支付"
              bars={data.revenue.map((d) => ({ label: formatDateTime(d.day).slice(5, 10), value: d.fen, caption: d.fen ? (d.fen / 100).toFixed(d.fen >= 10000 ? 0 : 2) : '' }))}
            />
          </Card>
        </Col>
        <Col xs={24} lg={10}>
          <Card size="small" title="各类任务总数">
            {rows.length === 0 ? (
              <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="还没有任务" />
            ) : (
              <BarChart color="#52c41a" bars={rows.map((r) => ({ label: kindLabel(r.kind).slice(0, 4), value: r.total }))} />
            )}
          </Card>
        </Col>
      </Row>
      <Card size="small" title="任务状态" className="mt">
        <Table
          size="small"
          rowKey="kind"
          pagination={false}
          scroll={{ x: 640 }}
          dataSource={rows}
          locale={{ emptyText: '还没有任务' }}
          columns={[
            { title: '类型', dataIndex: 'kind', render: (k: string) => kindLabel(k) },
            ...STATUS_ORDER.map((s) => ({
              // Every kind runs (检测中 is the check pages' word for it).
              title: s === 'running' ? '运行中' : STATUS[s].label,
              key: s,
              align: 'right' as const,
              render: (_: unknown, r: (typeof rows)[number]) => {
                const n = r.counts[s] ?? 0
                return s === 'failed' && n > 0 ? <Tag color="red">{n}</Tag> : n
              },
            })),
            { title: '合计', dataIndex: 'total', align: 'right' as const },
          ]}
        />
      </Card>
      <Row gutter={[16, 16]} className="mt">
        <Col xs={24} lg={12}>
          <Card size="small" title={`队列${stalled > 0 ? `（${stalled} 个任务的工作进程已失联，将被重新领取）` : ''}`}>
            <Table
              size="small"
              rowKey="queue"
              pagination={false}
              dataSource={data.queues}
              locale={{ emptyText: '队列为空' }}
              columns={[
                { title: '队列', dataIndex: 'queue', render: (q: string) => kindLabel(q) },
                { title: '等待', dataIndex: 'waiting', align: 'right' as const },
                { title: '运行中', dataIndex: 'running', align: 'right' as const },
                { title: '最久等待', dataIndex: 'oldestWaitingSeconds', render: (s: number) => (s > 0 ? formatWait(s) : '—') },
              ]}
            />
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card size="small" title={`在线工作进程（${data.workers.length}）`}>
            <Table
              size="small"
              rowKey="name"
              pagination={false}
              dataSource={data.workers}
              locale={{ emptyText: '没有在线的工作进程' }}
              columns={[
                { title: '进程', dataIndex: 'name' },
                { title: '每队列并发', dataIndex: 'perQueue', align: 'right' as const },
                { title: '最近心跳', dataIndex: 'seenAt', render: (v: number) => formatDateTime(v) },
              ]}
            />
          </Card>
        </Col>
      </Row>
      <Row gutter={[16, 16]} className="mt">
        <Col xs={24} lg={12}>
          <Card size="small" title="模型">
            <ModelEngines rows={data.models} />
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card size="small" title="存储">
            <Row gutter={16}>
              <Col span={12}>
                <Statistic title={`文件（${data.filesBackend === 'database' ? '数据库' : '本地目录'}）`} value={formatBytes(data.filesBytes)} />
              </Col>
              <Col span={12}>
                <Statistic title="比对库索引" value={data.libraryBytes > 0 ? formatBytes(data.libraryBytes) : '—'} />
              </Col>
            </Row>
          </Card>
        </Col>
      </Row>
    </>
  )
}

/** /admin/dashboard: users, money, tasks, queues, workers, models and disk at a glance. */
export default function ConsoleDashboard() {
  return (
    <OperatorGate>
      <div className="page-card">
        <DashboardBody />
      </div>
    </OperatorGate>
  )
}
