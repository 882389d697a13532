import { useEffect, useState } from 'react'
import { Alert, Button, Card, Checkbox, Form, Input, InputNumber, Segmented, Space, Typography, Upload } from 'antd'
import { InboxOutlined } from '@ant-design/icons'
import { useNavigate } from 'react-router'
import { checkInit, wordCount, type CheckSource } from './api'
import type { WordCount } from './types'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSubmit } from '../../utils/useSubmit'
import type { ApiError } from '../../api/client'

const ACCEPT = '.docx,.pdf,.txt'

/** /papercheck/check: upload or paste a paper, see its character count, choose options, go to payment. */
export default function CheckPage() {
  const navigate = useNavigate()
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const [mode, setMode] = useState<'file' | 'text'>('file')
  const [file, setFile] = useState<File | null>(null)
  const [text, setText] = useState('')
  const [title, setTitle] = useState('')
  const [author, setAuthor] = useState('')
  const [excludeBibliography, setExcludeBibliography] = useState(true)
  const [minSpan, setMinSpan] = useState(13)
  const [count, setCount] = useState<WordCount | null>(null)
  const [countError, setCountError] = useState<string | null>(null)

  const source: CheckSource = mode === 'file' ? { file: file ?? undefined, title, author } : { text, title, author }
  const ready = mode === 'file' ? Boolean(file) : text.trim().length > 0

  // Live count: at once for a file, shortly after typing stops for pasted text.
  useEffect(() => {
    if (!ready) {
      setCount(null)
      setCountError(null)
      return
    }
    let stale = false
    const timer = setTimeout(
      () => {
        wordCount(mode === 'file' ? { file: file ?? undefined } : { text })
          .then((c) => !stale && (setCount(c), setCountError(null)))
          .catch((e: ApiError) => !stale && (setCount(null), setCountError(e.message)))
      },
      mode === 'file' ? 0 : 500,
    )
    return () => {
      stale = true
      clearTimeout(timer)
    }
  }, [mode, file, text, ready])

  const [submitting, submit] = useSubmit(async () => {
    if (!token) {
      openLogin()
      return
    }
    const draft = await checkInit(source)
    navigate(`/paper/submit/${draft.id}?excludeBibliography=${excludeBibliography ? 1 : 0}&minSpan=${minSpan}`)
  })

  return (
    <div className="page-card">
      <Card title="论文查重" extra={<Button type="link" onClick={() => navigate('/paper/report')}>查重记录</Button>}>
        <Form layout="vertical">
          <Form.Item label="论文标题">
            <Input value={title} onChange={(e) => setTitle(e.target.value)} placeholder="不填则使用文件名" maxLength={200} />
          </Form.Item>
          <Form.Item label="作者">
            <Input value={author} onChange={(e) => setAuthor(e.target.value)} placeholder="选填" maxLength={100} />
          </Form.Item>
          <Form.Item label="论文内容">
            <Segmented
              value={mode}
              onChange={(v) => setMode(v as 'file' | 'text')}
              options={[
                { label: '上传文件', value: 'file' },
                { label: '粘贴文本', value: 'text' },
              ]}
            />
          </Form.Item>
          {mode === 'file' ? (
            <Upload.Dragger
              accept={ACCEPT}
              maxCount={1}
              fileList={file ? [{ uid: '1', name: file.name, status: 'done' }] : []}
              beforeUpload={(f) => {
                setFile(f)
                return false
              }}
              onRemove={() => setFile(null)}
              data-testid="check-upload"
            >
              <p className="ant-upload-drag-icon">
                <InboxOutlined />
              </p>
              <p className="ant-upload-text">点击或拖拽论文到此处</p>
              <p className="ant-upload-hint">支持 .docx、.pdf、.txt，单个文件不超过 50 MB、30 万字</p>
            </Upload.Dragger>
          ) : (
            <Input.TextArea
              value={text}
              onChange={(e) => setText(e.target.value)}
              autoSize={{ minRows: 8, maxRows: 20 }}
              placeholder="将论文正文粘贴到这里"
              data-testid="check-text"
            />
          )}
          <div className="check-count" data-testid="check-count">
            {countError ? (
              <Alert type="error" showIcon title={countError} />
            ) : count ? (
              <Typography.Text>
                检测字数：<b>{count.chars.toLocaleString('zh-CN')}</b> 字
                <Typography.Text type="secondary">（{count.rule}）</Typography.Text>
              </Typography.Text>
            ) : (
              <Typography.Text type="secondary">选择文件或粘贴文本后显示字数</Typography.Text>
            )}
          </div>
          <Form.Item label="检测选项">
            <Space wrap>
              <Checkbox checked={excludeBibliography} onChange={(e) => setExcludeBibliography(e.target.checked)}>
                不检测参考文献
              </Checkbox>
              <span>
                最小匹配字数
                <InputNumber min={8} max={50} value={minSpan} onChange={(v) => setMinSpan(v ?? 13)} style={{ marginLeft: 8, width: 80 }} />
              </span>
            </Space>
          </Form.Item>
          <Button type="primary" size="large" disabled={!ready || Boolean(countError)} loading={submitting} onClick={() => void submit(undefined)}>
            {token ? '下一步：确认并支付' : '登录后提交检测'}
          </Button>
        </Form>
      </Card>
    </div>
  )
}
