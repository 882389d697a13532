import { useState } from 'react'
import { Button, Checkbox, Form, Space } from 'antd'
import { useNavigate } from 'react-router'
import { checkInit, wordCount } from './api'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSubmit } from '../../utils/useSubmit'
import { usePaperInput } from '../../components/PaperInput'
import PageCard from '../../components/PageCard'

/** /papercheck/check: upload or paste a paper, see its character count, choose options, go to payment. */
export default function CheckPage() {
  const navigate = useNavigate()
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const paper = usePaperInput(wordCount)
  const [excludeBibliography, setExcludeBibliography] = useState(true)

  const [submitting, submit] = useSubmit(async () => {
    if (!token) {
      openLogin()
      return
    }
    const draft = await checkInit(paper.source)
    navigate(`/paper/submit/${draft.id}?excludeBibliography=${excludeBibliography ? 1 : 0}`)
  })

  return (
    <div className="page-card">
      <PageCard title="论文查重" extra={<Button type="link" onClick={() => navigate('/paper/report')}>查重记录</Button>}>
        <Form layout="vertical">
          {paper.fields}
          <Form.Item label="检测选项">
            <Space wrap>
              <Checkbox checked={excludeBibliography} onChange={(e) => setExcludeBibliography(e.target.checked)}>
                不检测参考文献
              </Checkbox>
              <span className="muted">正式报告按连续 13 字以上的相同文字计为重复（与知网规则一致）；更长的起算字数可在报告页作为自定义视图查看。</span>
            </Space>
          </Form.Item>
          <Button type="primary" size="large" disabled={!paper.ready || Boolean(paper.countError)} loading={submitting} onClick={() => void submit(undefined)}>
            {token ? '下一步：确认并支付' : '登录后提交检测'}
          </Button>
        </Form>
      </PageCard>
    </div>
  )
}
