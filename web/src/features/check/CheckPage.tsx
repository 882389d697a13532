import { useState } from 'react'
import { Button, Card, Checkbox, Form, InputNumber, Space } from 'antd'
import { useNavigate } from 'react-router'
import { checkInit, wordCount } from './api'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSubmit } from '../../utils/useSubmit'
import { usePaperInput } from '../../components/PaperInput'

/** /papercheck/check: upload or paste a paper, see its character count, choose options, go to payment. */
export default function CheckPage() {
  const navigate = useNavigate()
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const paper = usePaperInput(wordCount)
  const [excludeBibliography, setExcludeBibliography] = useState(true)
  const [minSpan, setMinSpan] = useState(13)

  const [submitting, submit] = useSubmit(async () => {
    if (!token) {
      openLogin()
      return
    }
    const draft = await checkInit(paper.source)
    navigate(`/paper/submit/${draft.id}?excludeBibliography=${excludeBibliography ? 1 : 0}&minSpan=${minSpan}`)
  })

  return (
    <div className="page-card">
      <Card title="论文查重" extra={<Button type="link" onClick={() => navigate('/paper/report')}>查重记录</Button>}>
        <Form layout="vertical">
          {paper.fields}
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
          <Button type="primary" size="large" disabled={!paper.ready || Boolean(paper.countError)} loading={submitting} onClick={() => void submit(undefined)}>
            {token ? '下一步：确认并支付' : '登录后提交检测'}
          </Button>
        </Form>
      </Card>
    </div>
  )
}
