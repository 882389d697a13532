import { useEffect, useState } from 'react'
import { Alert, Form, Input, Segmented, Upload } from 'antd'
import { InboxOutlined } from '@ant-design/icons'
import type { PaperSource } from '../api/paper'
import type { ApiError } from '../api/client'

const ACCEPT = '.docx,.pdf,.txt'

export interface WordCountLike {
  chars: number
  rule: string
}

export interface PaperInput {
  source: PaperSource
  /** A file is chosen or some text is pasted. */
  ready: boolean
  count: WordCountLike | null
  countError: string | null
  /** The title, author, file-or-text fields and the live count. */
  fields: React.ReactNode
}

/** Title, author and a paper (upload or paste) with a live character count from `countWith`. */
export function usePaperInput(countWith: (source: PaperSource) => Promise<WordCountLike>, textPlaceholder = '将论文正文粘贴到这里'): PaperInput {
  const [mode, setMode] = useState<'file' | 'text'>('file')
  const [file, setFile] = useState<File | null>(null)
  const [text, setText] = useState('')
  const [title, setTitle] = useState('')
  const [author, setAuthor] = useState('')
  const [count, setCount] = useState<WordCountLike | null>(null)
  const [countError, setCountError] = useState<string | null>(null)
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
        countWith(mode === 'file' ? { file: file ?? undefined } : { text })
          .then((c) => !stale && (setCount(c), setCountError(null)))
          .catch((e: ApiError) => !stale && (setCount(null), setCountError(e.message)))
      },
      mode === 'file' ? 0 : 500,
    )
    return () => {
      stale = true
      clearTimeout(timer)
    }
  }, [mode, file, text, ready, countWith])

  const fields = (
    <>
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
          data-testid="paper-upload"
        >
          <p className="ant-upload-drag-icon">
            <InboxOutlined />
          </p>
          <p className="ant-upload-text">点击或拖拽论文到此处</p>
          <p className="ant-upload-hint">支持 .docx、.pdf、.txt，单个文件不超过 50 MB、30 万字</p>
        </Upload.Dragger>
      ) : (
        <Input.TextArea value={text} onChange={(e) => setText(e.target.value)} autoSize={{ minRows: 8, maxRows: 20 }} placeholder={textPlaceholder} data-testid="paper-text" />
      )}
      <div className="check-count" data-testid="paper-count">
        {countError ? (
          <Alert type="error" showIcon title={countError} />
        ) : count ? (
          <span>
            检测字数：<b>{count.chars.toLocaleString('zh-CN')}</b> 字<span className="text-secondary">（{count.rule}）</span>
          </span>
        ) : (
          <span className="text-secondary">选择文件或粘贴文本后显示字数</span>
        )}
      </div>
    </>
  )
  const source: PaperSource = mode === 'file' ? { file: file ?? undefined, title, author } : { text, title, author }
  return { source, ready, count, countError, fields }
}
