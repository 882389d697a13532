import { Button, Modal, Table } from 'antd'
import { useErrorLogStore, type ErrorLogEntry } from '../stores/errorLog'
import { formatDateTime } from '../utils/format'

/** What went wrong, newest last (its own chunk: the table loads when the dialog first opens). */
export default function ErrorLogDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { logs, clear } = useErrorLogStore()
  return (
    <Modal
      open={open}
      onCancel={onClose}
      title="错误日志"
      width="80%"
      footer={[
        <Button key="clear" danger onClick={() => { clear(); onClose() }}>清空</Button>,
        <Button key="close" onClick={onClose}>关闭</Button>,
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
  )
}
