import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Alert, Button, Card, Descriptions, Empty, Form, Input, InputNumber, Modal, Popconfirm, Progress, Space, Table, Tag } from 'antd'
import OperatorGate from './OperatorGate'
import ModelEngines from './ModelEngines'
import { fetchModel, models as loadModels, resetEndpoint, saveEndpoint, testEndpoint } from './api'
import { formatDateTime } from '../../utils/format'
import { formatBytes } from './labels'
import type { EndpointForm, EndpointTest, ModelsView } from './types'
import { toastSuccess } from '../../utils/feedback'

const SOURCE_LABELS: Record<ModelsView['endpoint']['source'], string> = {
  console: '后台设置',
  file: '配置文件',
  none: '未配置',
}

function EndpointEditor({ view, onClose }: { view: ModelsView; onClose: () => void }) {
  const client = useQueryClient()
  const e = view.endpoint
  const [form, setForm] = useState<EndpointForm>({ baseUrl: e.baseUrl ?? '', model: e.model ?? '', apiKey: '', timeoutSeconds: e.timeoutSeconds })
  const [saving, setSaving] = useState(false)
  const set = (patch: Partial<EndpointForm>) => setForm((f) => ({ ...f, ...patch }))
  const save = async () => {
    setSaving(true)
    try {
      client.setQueryData(['admin', 'models'], await saveEndpoint(form))
      toastSuccess('已保存：所有服务器与后台进程在 5 秒内改用新设置')
      onClose()
    } catch {
      // Toasted by the client (an address that is not http(s), no model name).
    } finally {
      setSaving(false)
    }
  }
  return (
    <Modal open title="设置外部模型服务" okText="保存" cancelText="取消" onOk={save} confirmLoading={saving} onCancel={onClose} destroyOnClose>
      <Form layout="vertical">
        <Form.Item label="接口地址" extra="OpenAI 兼容接口的地址，如 https://api.deepseek.com/v1">
          <Input value={form.baseUrl} onChange={(ev) => set({ baseUrl: ev.target.value })} data-testid="endpoint-url" />
        </Form.Item>
        <Form.Item label="模型名称">
          <Input value={form.model} onChange={(ev) => set({ model: ev.target.value })} data-testid="endpoint-model" />
        </Form.Item>
        <Form.Item label="API 密钥" extra={e.keySet ? '留空则保留现有密钥' : '该服务不需要密钥时可留空'}>
          <Input.Password value={form.apiKey} onChange={(ev) => set({ apiKey: ev.target.value })} autoComplete="new-password" data-testid="endpoint-key" />
        </Form.Item>
        <Form.Item label="超时（秒）" extra="5–600 秒">
          <InputNumber value={form.timeoutSeconds} onChange={(v) => set({ timeoutSeconds: typeof v === 'number' ? v : 0 })} style={{ width: 140 }} />
        </Form.Item>
      </Form>
    </Modal>
  )
}

function EndpointCard({ view }: { view: ModelsView }) {
  const client = useQueryClient()
  const [testing, setTesting] = useState(false)
  const [editing, setEditing] = useState(false)
  const [result, setResult] = useState<EndpointTest | null>(null)
  const [failure, setFailure] = useState<string | null>(null)
  const e = view.endpoint
  const test = async () => {
    setTesting(true)
    setResult(null)
    setFailure(null)
    try {
      setResult(await testEndpoint())
    } catch (err) {
      setFailure((err as Error).message)
    } finally {
      setTesting(false)
    }
  }
  const reset = async () => {
    try {
      client.setQueryData(['admin', 'models'], await resetEndpoint())
      // The last test was of the settings just removed.
      setResult(null)
      setFailure(null)
      toastSuccess('已恢复为配置文件中的设置')
    } catch {
      // Toasted by the client.
    }
  }
  return (
    <Card
      size="small"
      title="外部模型服务（OpenAI 兼容接口）"
      className="mb"
      extra={
        <Space>
          <Tag>{SOURCE_LABELS[e.source]}</Tag>
          <Button size="small" onClick={() => setEditing(true)} data-testid="edit-endpoint">
            {e.configured ? '修改' : '设置'}
          </Button>
        </Space>
      }
    >
      {e.configured ? (
        <Descriptions size="small" column={{ xs: 1, sm: 2 }} bordered>
          <Descriptions.Item label="地址">{e.baseUrl}</Descriptions.Item>
          <Descriptions.Item label="模型">{e.model}</Descriptions.Item>
          <Descriptions.Item label="密钥">{e.keySet ? <Tag color="green">已设置</Tag> : <Tag>未设置</Tag>}</Descriptions.Item>
          <Descriptions.Item label="超时">{e.timeoutSeconds} 秒</Descriptions.Item>
        </Descriptions>
      ) : (
        <Alert type="info" showIcon message="未配置外部模型服务" description="改写、对话与论文写作由本地小模型完成。如需更好的效果，点“设置”填写 OpenAI 兼容接口的地址、模型与密钥，保存后无需重启即生效。" />
      )}
      <Space className="mt" wrap>
        <Button onClick={test} loading={testing} disabled={!e.configured} data-testid="test-endpoint">
          测试连接
        </Button>
        {e.source === 'console' && (
          <Popconfirm title="恢复为配置文件中的设置？" okText="恢复" cancelText="取消" onConfirm={reset}>
            <Button data-testid="reset-endpoint">恢复配置文件的设置</Button>
          </Popconfirm>
        )}
      </Space>
      {result && (
        <Alert className="mt" type="success" showIcon message={`连接正常：${result.millis} 毫秒`} description={`${result.model} 回答：${result.answer}`} data-testid="endpoint-ok" />
      )}
      {failure && <Alert className="mt" type="error" showIcon message="连接失败" description={failure} />}
      <p className="muted">测试会向该服务发送一次真实请求（很短的一句话），可能产生少量费用。密钥保存在数据库中，页面和操作日志都不会显示它。</p>
      {editing && (
        <EndpointEditor
          view={view}
          onClose={() => {
            setEditing(false)
            setResult(null)
            setFailure(null)
          }}
        />
      )}
    </Card>
  )
}

function ModelsBody() {
  const client = useQueryClient()
  const { data, error, refetch } = useQuery({
    queryKey: ['admin', 'models'],
    queryFn: loadModels,
    // While a model installs, its progress is read every 2 s.
    refetchInterval: (q) => ((q.state.data?.fetches ?? []).some((f) => !['done', 'failed', 'cancelled'].includes(f.status)) ? 2000 : false),
  })
  const [asking, setAsking] = useState<string | null>(null)
  const install = async (name: string) => {
    setAsking(name)
    try {
      client.setQueryData(['admin', 'models'], await fetchModel(name))
      toastSuccess(`已开始安装 ${name}`)
    } catch {
      // Toasted by the client (already installing, say).
    } finally {
      setAsking(null)
    }
  }
  if (error) {
    return (
      <Card>
        <Empty description={`加载失败：${(error as Error).message}`}>
          <Button onClick={() => refetch()}>重试</Button>
        </Empty>
      </Card>
    )
  }
  if (!data) return <Card loading />
  return (
    <>
      <Card size="small" title="各功能由谁完成" className="mb">
        <ModelEngines rows={data.features} />
      </Card>
      <EndpointCard view={data} />
      <Card size="small" title={`本地模型（${data.modelsDir}）`}>
        <Table
          size="small"
          rowKey="name"
          pagination={false}
          scroll={{ x: 560 }}
          dataSource={data.models}
          columns={[
            { title: '名称', dataIndex: 'name', width: 140 },
            { title: '用途', dataIndex: 'purpose' },
            { title: '状态', dataIndex: 'installed', width: 90, render: (v: boolean) => (v ? <Tag color="green">已安装</Tag> : <Tag color="red">未安装</Tag>) },
            { title: '大小', dataIndex: 'bytes', width: 100, render: (b: number) => (b > 0 ? formatBytes(b) : '—') },
            {
              title: '操作',
              key: 'install',
              width: 110,
              render: (_: unknown, m: ModelsView['models'][number]) => {
                if (!m.purpose) return null
                const running = data.fetches.some((f) => f.name === m.name && !['done', 'failed', 'cancelled'].includes(f.status))
                return (
                  <Button size="small" loading={asking === m.name} disabled={running} onClick={() => install(m.name)} data-testid={`install-${m.name}`}>
                    {running ? '安装中' : m.installed ? '重新校验' : '安装'}
                  </Button>
                )
              },
            },
          ]}
        />
        {data.fetches.length > 0 && (
          <div className="model-fetches">
            {data.fetches.slice(0, 5).map((f) => (
              <div key={f.taskId} className="model-fetch" data-testid="model-fetch">
                <Space wrap size={8}>
                  <b>安装 {f.name}</b>
                  <Tag color={f.status === 'done' ? 'green' : f.status === 'failed' ? 'red' : 'blue'}>
                    {{ done: '已完成', failed: '失败', cancelled: '已取消', running: '安装中', queued: '排队中', pending: '排队中' }[f.status] ?? f.status}
                  </Tag>
                  <span className="muted">
                    {f.loginName} · {formatDateTime(f.createdAt)}
                  </span>
                </Space>
                {!['done', 'failed', 'cancelled'].includes(f.status) && <Progress percent={f.progress} size="small" status="active" />}
                <div className={f.status === 'failed' ? 'text-danger' : 'muted'}>{f.error ?? f.phase}</div>
              </div>
            ))}
          </div>
        )}
        <p className="muted">
          “安装”由后台进程从软件包仓库（PyPI、npm，不是模型托管站）下载模型文件，按发布的 SHA-256 校验后放入上面的目录，下一次请求即可使用（查重的句向量层需重启）。多台服务器部署时，每台机器都需安装：在该机器上运行 <code>wenjian models fetch 名称</code>。
        </p>
      </Card>
    </>
  )
}

/** /admin/models: installed models, the endpoint's settings and a real test call. */
export default function ConsoleModels() {
  return (
    <OperatorGate>
      <div className="page-card">
        <ModelsBody />
      </div>
    </OperatorGate>
  )
}
