import { Alert, Button, Card, Typography } from 'antd'
import { useNavigate } from 'react-router'
import { useLoginDialogStore } from '../../stores/loginDialog'

/** How to regain access: there is no e-mail or SMS reset, so this says what actually works. */
export default function ForgotPasswordPage() {
  const navigate = useNavigate()
  const openLogin = useLoginDialogStore((s) => s.open)
  return (
    <div className="page-card narrow">
      <Card title="忘记密码">
        <Typography.Paragraph>本平台不通过短信或邮件重置密码。您可以通过以下方式找回账号：</Typography.Paragraph>
        <ol className="help-list">
          <li>
            <b>扫码登录后重设：</b>如果您的手机上仍登录着本平台，请在电脑的登录窗口选择扫码登录并用手机确认；登录后 15 分钟内，在「账户中心 → 修改密码」中不填原密码，直接设置新密码即可。
          </li>
          <li>
            <b>联系管理员：</b>请联系您所在学校或本平台的管理员，提供您的用户名。管理员核实身份后，可在服务器上为您重置密码。
          </li>
        </ol>
        <Alert type="info" showIcon title="请勿向任何人透露您的密码，管理员不会主动向您索要密码。" />
        <div className="actions">
          <Button type="primary" onClick={() => { navigate('/papercheck/check'); openLogin() }}>
            返回登录
          </Button>
        </div>
      </Card>
    </div>
  )
}
