import { Table, Tag } from 'antd'
import type { ModelRow } from './types'

/** Which model serves each feature here, or why none can (dashboard and models page). */
export default function ModelEngines({ rows }: { rows: ModelRow[] }) {
  return (
    <Table<ModelRow>
      size="small"
      rowKey="feature"
      pagination={false}
      dataSource={rows}
      columns={[
        { title: '功能', dataIndex: 'feature', width: 100, className: 'nowrap' },
        {
          title: '由谁完成',
          key: 'source',
          render: (_: unknown, m) =>
            m.source === 'none' ? (
              <span className="minus">{m.unavailable ?? '不可用'}</span>
            ) : (
              <span>
                <Tag color={m.source === 'endpoint' ? 'blue' : 'default'}>{m.source === 'endpoint' ? '外部模型服务' : '本地模型'}</Tag>
                {m.model}
              </span>
            ),
        },
      ]}
    />
  )
}
