import { useState } from 'react'
import { Badge, Button, Modal, Table, Tooltip } from 'antd'
import { BugOutlined } from '@ant-design/icons'
import { useErrorLogStore, type ErrorLogEntry } from '../stores/errorLog'
import { formatDateTime } from '../utils/format'

/** The bug icon appears once something has gone wrong; its dialog lists what happened. */
export default function ErrorLog() {
  const { logs, clear } = useErrorLogStore()
  const [open, setOpen] = useState(false)
  if (logs.length === 0) return null
  return (
    <>
      <Tooltip title="错误日志">
        <Badge count={logs.length} size="small" offset={[-4, 4]}>
          <BugOutlined className="navbar-icon error-log-icon" onClick={() => setOpen(true)} aria-label="错误日志" />
        </Badge>
      </Tooltip>
      <Modal
        open={open}
        onCancel={() => setOpen(false)}
        title="错误日志"
        width="80%"
        footer={[
          <Button key="clear" danger onClick={() => { clear(); setOpen(false) }}>清空</Button>,
          <Button key="close" onClick={() => setOpen(false)}>关闭</Button>,
        ]}
      >
        <Table<ErrorLogEntry>
          rowKey={(r) => `${r.time}-${r.message}`}
          size="small"
          dataSource={logs}
          pagination={false}
          columns={[
            { title: '时间', dataIndex: 'time', width: 150, render: (v: number) => formatDateTime(v) },
            { title: '信息', dataIndex: 'message', render: (v: string, r) => <><div>{v}</div><pre className="error-stack">{r.stack}</pre></> },
            { title: '页面', dataIndex: 'url', width: 240 },
          ]}
        />
      </Modal>
    </>
  )
}
