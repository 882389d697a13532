import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Alert, Button, Card, Descriptions, Empty, Table, Tag } from 'antd'
import OperatorGate from './OperatorGate'
import ModelEngines from './ModelEngines'
import { models as loadModels, testEndpoint } from './api'
import { formatBytes } from './labels'
import type { EndpointTest, ModelsView } from './types'

function EndpointCard({ view }: { view: ModelsView }) {
  const [testing, setTesting] = useState(false)
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
  return (
    <Card size="small" title="外部模型服务（OpenAI 兼容接口）" className="mb">
      {e.configured ? (
        <Descriptions size="small" column={{ xs: 1, sm: 2 }} bordered>
          <Descriptions.Item label="地址">{e.baseUrl}</Descriptions.Item>
          <Descriptions.Item label="模型">{e.model}</Descriptions.Item>
          <Descriptions.Item label="密钥">{e.keySet ? <Tag color="green">已设置</Tag> : <Tag>未设置</Tag>}</Descriptions.Item>
          <Descriptions.Item label="超时">{e.timeoutSeconds} 秒</Descriptions.Item>
        </Descriptions>
      ) : (
        <Alert type="info" showIcon message="未配置外部模型服务" description="改写、对话与论文写作由本地小模型完成。如需更好的效果，请在配置文件中设置 llm_base_url、llm_model 与 llm_api_key 后重启服务。" />
      )}
      <Button className="mt" onClick={test} loading={testing} disabled={!e.configured} data-testid="test-endpoint">
        测试连接
      </Button>
      {result && (
        <Alert className="mt" type="success" showIcon message={`连接正常：${result.millis} 毫秒`} description={`${result.model} 回答：${result.answer}`} data-testid="endpoint-ok" />
      )}
      {failure && <Alert className="mt" type="error" showIcon message="连接失败" description={failure} />}
      <p className="muted">测试会向该服务发送一次真实请求（很短的一句话），可能产生少量费用。</p>
    </Card>
  )
}

function ModelsBody() {
  const { data, error, refetch } = useQuery({ queryKey: ['admin', 'models'], queryFn: loadModels })
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
          ]}
        />
        <p className="muted">
          安装或更新模型：在服务器上运行 <code>wenjian models fetch 名称</code>（文件经校验后放入上面的目录，所有进程下次加载时使用）。
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
