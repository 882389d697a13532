import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Alert, Button, Card, Col, Empty, Input, Modal, Popconfirm, Row, Select, Space, Table, Tag } from 'antd'
import OperatorGate from './OperatorGate'
import { promptVersions, prompts, savePrompt, type PromptChange } from './api'
import type { PromptRow, PromptVersionRow } from './types'
import { formatDateTime } from '../../utils/format'
import { toastSuccess } from '../../utils/feedback'

function History({ prompt, onRestore }: { prompt: PromptRow; onRestore: (v: PromptVersionRow) => void }) {
  const [shown, setShown] = useState<PromptVersionRow | null>(null)
  const { data, error, isFetching } = useQuery({
    queryKey: ['admin', 'prompts', 'versions', prompt.name, prompt.versions],
    queryFn: () => promptVersions(prompt.name),
  })
  return (
    <>
      <Table<PromptVersionRow>
        size="small"
        rowKey="id"
        loading={isFetching && !data}
        dataSource={data ?? []}
        pagination={(data?.length ?? 0) > 8 ? { pageSize: 8, showSizeChanger: false } : false}
        locale={{ emptyText: error ? `加载失败：${(error as Error).message}` : '还没有保存过版本：当前使用内置版本' }}
        scroll={{ x: 560 }}
        columns={[
          {
            title: '版本',
            dataIndex: 'number',
            width: 90,
            render: (n: number, v) => (
              <Space size={4}>
                第 {n} 版{v.current && <Tag color="green">当前</Tag>}
              </Space>
            ),
          },
          { title: '说明', dataIndex: 'note', ellipsis: true, render: (note: string, v) => note || (v.isBuiltin ? '内置版本' : '—') },
          { title: '操作人', dataIndex: 'actorName', width: 110, ellipsis: true },
          { title: '时间', dataIndex: 'createdAt', width: 150, render: formatDateTime },
          {
            title: '操作',
            key: 'actions',
            width: 130,
            render: (_: unknown, v) => (
              <Space size={0}>
                <Button type="link" size="small" onClick={() => setShown(v)}>
                  查看
                </Button>
                <Popconfirm
                  title={`恢复为第 ${v.number} 版？`}
                  description="会保存为一个新版本，历史不会丢失。"
                  okText="恢复"
                  cancelText="取消"
                  disabled={v.current}
                  onConfirm={() => onRestore(v)}
                >
                  <Button type="link" size="small" disabled={v.current} data-testid="prompt-restore">
                    恢复
                  </Button>
                </Popconfirm>
              </Space>
            ),
          },
        ]}
      />
      <Modal open={shown !== null} title={shown ? `第 ${shown.number} 版` : ''} footer={null} onCancel={() => setShown(null)} width={720}>
        <pre className="prompt-text">{shown?.text}</pre>
      </Modal>
    </>
  )
}

function Editor({ prompt }: { prompt: PromptRow }) {
  const client = useQueryClient()
  const [text, setText] = useState(prompt.text)
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)
  const change = async (what: PromptChange, done: string, reason = note) => {
    setBusy(true)
    try {
      const rows = await savePrompt(prompt.name, what, reason.trim())
      client.setQueryData(['admin', 'prompts'], rows)
      const saved = rows.find((r) => r.name === prompt.name)
      if (saved) setText(saved.text)
      setNote('')
      toastSuccess(done)
    } catch {
      // Toasted by the client (a missing placeholder, nothing changed).
    } finally {
      setBusy(false)
    }
  }
  const edited = text.trim() !== prompt.text.trim()
  return (
    <Space direction="vertical" size={12} style={{ width: '100%' }}>
      <div>
        <Space wrap>
          <b>{prompt.title}</b>
          <Tag>{prompt.name}</Tag>
          {prompt.isBuiltin ? <Tag>内置版本</Tag> : <Tag color="blue">已修改</Tag>}
          {prompt.updatedAt && (
            <span className="muted">
              {prompt.updatedBy} 于 {formatDateTime(prompt.updatedAt)} 修改
            </span>
          )}
        </Space>
        {prompt.placeholders.length > 0 && (
          <p className="muted">
            必须保留的占位符：{prompt.placeholders.map((p) => `{${p}}`).join('、')}（生成时替换为实际内容）
          </p>
        )}
      </div>
      <Input.TextArea value={text} onChange={(e) => setText(e.target.value)} autoSize={{ minRows: 10, maxRows: 24 }} data-testid="prompt-text" />
      <Space wrap>
        <Input placeholder="修改说明（选填，显示在历史中）" value={note} onChange={(e) => setNote(e.target.value)} maxLength={100} style={{ width: 280 }} />
        <Button type="primary" disabled={!edited} loading={busy} onClick={() => change({ text }, '已保存为新版本，下一次生成起生效')} data-testid="prompt-save">
          保存为新版本
        </Button>
        <Button disabled={!edited} onClick={() => setText(prompt.text)}>
          撤销编辑
        </Button>
        <Popconfirm
          title="恢复为内置版本？"
          description="内置版本是随软件发布、经过测试的提示词。"
          okText="恢复"
          cancelText="取消"
          disabled={prompt.isBuiltin}
          onConfirm={() => change({ builtin: true }, '已恢复为内置版本')}
        >
          <Button disabled={prompt.isBuiltin} data-testid="prompt-reset">
            恢复内置版本
          </Button>
        </Popconfirm>
      </Space>
      <Alert type="info" showIcon message="保存后，改写、论文生成和答辩PPT的下一次请求即使用新版本（所有服务器与后台进程）；每次修改都会留下版本，可随时恢复。" />
      <Card size="small" title="历史版本">
        <History prompt={prompt} onRestore={(v) => change({ versionId: v.id }, `已恢复为第 ${v.number} 版`, '')} />
      </Card>
    </Space>
  )
}

function PromptsBody() {
  const { data, error, refetch, isFetching } = useQuery({ queryKey: ['admin', 'prompts'], queryFn: prompts })
  const [selected, setSelected] = useState<string | null>(null)
  const rows = data ?? []
  const current = rows.find((p) => p.name === selected) ?? rows[0]
  if (error && !data) {
    return (
      <Empty description={`加载失败：${(error as Error).message}`}>
        <Button onClick={() => refetch()}>重试</Button>
      </Empty>
    )
  }
  const groups = [...new Set(rows.map((r) => r.group))]
  return (
    <Card title="提示词" loading={isFetching && !data}>
      <Row gutter={[16, 16]}>
        <Col xs={24} md={7}>
          <div className="prompt-picker">
            <Select
              value={current?.name}
              onChange={setSelected}
              style={{ width: '100%' }}
              options={groups.map((g) => ({
                label: g,
                options: rows
                  .filter((r) => r.group === g)
                  .map((r) => ({ value: r.name, label: `${r.title}${r.isBuiltin ? '' : '（已修改）'}` })),
              }))}
              data-testid="prompt-picker"
            />
          </div>
          <div className="prompt-list">
            {groups.map((g) => (
              <div key={g}>
                <div className="prompt-group">{g}</div>
                {rows
                  .filter((r) => r.group === g)
                  .map((r) => (
                    <button
                      type="button"
                      key={r.name}
                      className={`prompt-item${r.name === current?.name ? ' active' : ''}`}
                      onClick={() => setSelected(r.name)}
                    >
                      <span>{r.title}</span>
                      {!r.isBuiltin && <Tag color="blue">已修改</Tag>}
                    </button>
                  ))}
              </div>
            ))}
          </div>
        </Col>
        <Col xs={24} md={17}>
          {current ? <Editor key={`${current.name}:${current.versions}`} prompt={current} /> : <Empty />}
        </Col>
      </Row>
    </Card>
  )
}

/** /admin/prompts: the prompts of rewriting, paper generation and slides, with their versions. */
export default function ConsolePrompts() {
  return (
    <OperatorGate>
      <div className="page-card">
        <PromptsBody />
      </div>
    </OperatorGate>
  )
}
